Feature: SEED-003 (PRD-0003) Sub-session contract and context budget
  Seed 003, REQ-0003-020: "Task(deep-research, ...) 的返回值包含 sub_session_id 与 report_path"; the
  webview Task returns "≤ 指定上限的 summary"; "子会话的 events.jsonl … 可在
  .agents/sessions/<id>/events.jsonl … 中追溯". REQ-0003-001: "任意 ToolResult 输出中的超长字符串
  字段会被“头+尾”截断并带 marker" before the provider input is built.

  @tasks @REQ-0003-020
  Scenario: A deep research returns small JSON with a bounded summary
    Seed 003, line 54: "`Task(deep-research, ...)` 的返回值包含 `sub_session_id` 与 `report_path`（主会话只需知道报告地址即可）；"
    Seed 003, line 53: "`Task(webview, ...)` 的返回值包含 `sub_session_id` 与 ≤ 指定上限的 `summary`；"
    Given the scenario "deep-research-reset-then-ok"
    When the implementation runs a deep-research task
    Then the task result has ok true
    And the task result has the fields sub_session_id, report_path, events_path
    And the task summary is at most 2000 bytes
    And the task events are under .agents/sessions/<sub_session_id>/events.jsonl

  @tasks @REQ-0003-001
  Scenario: A huge tool output is cut head and tail around a marker before it reaches the provider
    Seed 003, line 34: "任意 ToolResult 输出中的超长字符串字段会被“头+尾”截断并带 marker；"
    Given the scenario "deep-research-huge-tool-output"
    When the implementation runs a deep-research task
    Then the request after the tool call carries the tool output cut head and tail around a marker
    And ideally the request after the tool call carries at most 64 KB of tool output
