@REQ-0006-020
Feature: REQ-0006-020 A failed deep research returns ok=false with its details
  Seed 000, REQ-0006-020: "Task(deep-research) 失败时必须返回 ok=false，并包含：" "error_type /
  error_message / stop_reason", "sub_session_id / events_path / report_path". Acceptance: "主会话
  不再把失败当成功；UI 能看到“失败 + 报告链接”". What counts is the Task result the main session
  actually received — read from the request the main session sent its model next — not what the
  implementation says about itself.

  @tasks
  Scenario: A deep research whose stream breaks on every attempt reports ok=false
    Seed 000, line 72: "`Task(deep-research)` 失败时必须返回 `ok=false`，并包含："
    Seed 000, line 73: "`error_type` / `error_message` / `stop_reason`"
    Seed 000, line 74: "`sub_session_id` / `events_path` / `report_path`"
    Given the scenario "deep-research-eof-every-attempt"
    When the implementation runs a deep-research task
    Then the task result has ok false
    And the task result has stop_reason "error"
    And the task result has the fields error_type, error_message, stop_reason, sub_session_id, events_path, report_path

  @tasks
  Scenario: The main session receives the failure, not a success
    Seed 000, line 76: "人工复现 `EOFException` 时，主会话不再把失败当成功；UI 能看到“失败 + 报告链接”。"
    Given the scenario "deep-research-eof-every-attempt"
    When the implementation runs a main-session turn
    Then the Task result the main session sent its model has ok false
    And the Task result the main session sent its model has the fields error_type, error_message, stop_reason, sub_session_id, events_path, report_path
