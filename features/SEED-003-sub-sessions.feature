Feature: SEED-003 (PRD-0003) Sub-session contract and context budget
  Task(agent, prompt) runs a sub-session and returns small JSON: sub_session_id, a bounded
  summary and report_path; its events live under .agents/sessions/<id>/events.jsonl.

  @tasks @REQ-0003-020
  Scenario: A deep research returns small JSON with a bounded summary
    Given the scenario "deep-research-reset-then-ok"
    When the implementation runs a deep-research task
    Then the task result has ok true
    And the task result has the fields sub_session_id, report_path, events_path
    And the task summary is at most 2000 bytes
    And the task events are under .agents/sessions/<sub_session_id>/events.jsonl

  @tasks @wire @should @REQ-0003-001
  Scenario: A huge tool output is budgeted before it reaches the provider
    Given the scenario "deep-research-huge-tool-output"
    When the implementation runs a deep-research task
    Then the request after the tool call carries at most 64 KB of tool output
