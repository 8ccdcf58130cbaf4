@REQ-0006-030
Feature: REQ-0006-030 No retry storm after a failed deep research
  When Task(deep-research) returns ok=false or stop_reason="error", the main session does
  not start it again on its own: it reports the failure and suggests a retry.

  @tasks @wire
  Scenario: A model that keeps asking for deep research starts exactly one sub-session
    Given the scenario "stubborn-model-relaunches-deep-research"
    When the implementation runs a main-session turn
    Then exactly 1 deep-research sub-session starts

  @tasks @wire @should
  Scenario: The main session's instructions state the rule
    Given the scenario "stubborn-model-relaunches-deep-research"
    When the implementation runs a main-session turn
    Then the main session's instructions forbid relaunching deep research
