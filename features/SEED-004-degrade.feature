Feature: SEED-004 Per-error-kind limits and degrade instead of fail
  Timeouts get 2 attempts, 429 and 5xx get 3; after exhaustion the caller degrades rather
  than fails, and the worst case stays within 5 minutes (SC-002).

  @wire @SEED-004-LIMITS
  Scenario: A stream that keeps timing out gets 2 attempts
    Given the implementation runs with the "fast-fail" profile
    And the provider breaks the stream with "stall" after 2 events on every attempt
    When the implementation streams one model call
    Then the server sees exactly 2 attempts

  @wire @SEED-004-LIMITS
  Scenario Outline: Status <status> on every attempt gets 3 attempts
    Given the implementation runs with the "fast-fail" profile
    And every attempt answers with status <status>
    When the implementation streams one model call
    Then the server sees exactly 3 attempts

    Examples:
      | status |
      | 429    |
      | 503    |

  @wire @events @SEED-004-DEGRADE
  Scenario: An unavailable provider degrades within 5 minutes
    Given the implementation runs with the "fast-fail" profile
    And a fallback answering "AST-only summary" is attached
    And the provider breaks the stream with "stall" after 2 events on every attempt
    When the implementation streams one model call
    Then the call ends within 300 seconds
    And the result records the degradation and its cause
