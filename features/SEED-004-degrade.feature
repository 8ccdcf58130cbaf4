Feature: SEED-004 Per-error-kind limits and degrade instead of fail
  Seed 004: "LLM 层（超时） | 2 | LLMTimeoutError" and "LLM 层（其他） | 3 | 429、5xx"; after the
  retries are used up the caller degrades ("降级（返回而非抛出）", recorded as `degraded`) instead
  of failing, and the worst case stays within 5 minutes ("满足 SC-002（≤5 分钟）").

  @wire @SEED-004-LIMITS
  Scenario Outline: A call that keeps timing out by <kind> gets 2 attempts
    Seed 004, line 45: "| LLM 层（超时） | 2 | LLMTimeoutError | ~246s |"
    Given the implementation runs with the "fast-fail" profile
    And <failure>
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And the result has ok false

    Examples:
      | kind             | failure                                                                        |
      | a stalled stream | the provider breaks the stream with "stall" before any output on every attempt |
      | a header timeout | every attempt sends no headers for 3600 seconds                                |

  @wire @SEED-004-LIMITS
  Scenario Outline: Status <status> on every attempt gets 3 attempts
    Seed 004, line 46: "| LLM 层（其他） | 3 | 429、5xx | ~366s |"
    Given the implementation runs with the "fast-fail" profile
    And every attempt answers with status <status>
    When the implementation streams one model call
    Then the server sees exactly 3 attempts
    And the result has ok false

    Examples:
      | status |
      | 429    |
      | 500    |
      | 502    |
      | 503    |
      | 504    |

  @wire @events @SEED-004-DEGRADE
  Scenario: An unavailable provider degrades within 5 minutes
    Seed 004, line 111: "当 `generateSpec` 成功降级（返回而非抛出），batch-orchestrator 应将该模块记录为 `degraded` 状态。"
    Seed 004, line 119: "满足 SC-002（≤5 分钟）"
    Given the implementation runs with the "fast-fail" profile
    And a fallback answering "AST-only summary" is attached
    And the provider breaks the stream with "stall" before any output on every attempt
    When the implementation streams one model call
    Then the call ends within 300 seconds
    And the result records the degradation and its cause
