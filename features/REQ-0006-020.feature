@REQ-0006-020
Feature: REQ-0006-020 A failed deep research returns ok=false with its details
  Task(deep-research) failure returns ok=false with error_type, error_message,
  stop_reason, sub_session_id, events_path and report_path; the main session does not
  treat the failure as success.

  @tasks
  Scenario: A deep research whose stream breaks on every attempt reports ok=false
    Given the scenario "deep-research-eof-every-attempt"
    When the implementation runs a deep-research task
    Then the task result has ok false
    And the task result has stop_reason "error"
    And the task result has the fields error_type, error_message, stop_reason, sub_session_id, events_path, report_path

  @tasks
  Scenario: The main session sees the failure, not a success
    Given the scenario "deep-research-eof-every-attempt"
    When the implementation runs a main-session turn
    Then the main session receives a Task result with ok false
