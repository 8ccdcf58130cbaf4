@REQ-0006-002
Feature: REQ-0006-002 Retry is bounded, controllable, on by default (ECN-0003)
  Seed 000, REQ-0006-002: "重试必须可控，… 由 providerRetry.maxRetries > 0 显式开启", changed by
  ECN-0003: "ProviderRetryOptions.maxRetries 默认值为 **6**（失败后最多重试 6 次；总尝试最多 7 次）",
  "退避策略为指数退避并设置上限". With REQ-0006-001's "达到 maxRetries 后应以 runtime.error …", a
  provider that always fails in a retryable way gets exactly 7 attempts under the defaults —
  whatever the retryable kind — and the waits grow exponentially up to a cap.

  @wire @events
  Scenario Outline: The defaults make exactly 7 attempts when <kind> never recovers
    Seed 000, line 61: "`ProviderRetryOptions.maxRetries` 默认值为 **6**（失败后最多重试 6 次；总尝试最多 7 次）。"
    Given <failure>
    When the implementation streams one model call
    Then the server sees exactly 7 attempts
    And the result has ok false
    And the result has stop_reason "error"
    And the events contain exactly 1 "runtime.error"

    Examples:
      | kind               | failure                                                                           |
      | status 500         | every attempt answers with status 500                                             |
      | status 502         | every attempt answers with status 502                                             |
      | status 503         | every attempt answers with status 503                                             |
      | status 504         | every attempt answers with status 504                                             |
      | status 408         | every attempt answers with status 408                                             |
      | status 425         | every attempt answers with status 425                                             |
      | status 429         | every attempt answers with status 429                                             |
      | a header timeout   | every attempt sends no headers for 3600 seconds                                   |
      | an EOF mid-stream  | the provider breaks the stream with "eof" before any output on every attempt      |
      | a connection reset | the provider breaks the stream with "reset" before any output on every attempt    |
      | a truncated stream | the provider breaks the stream with "truncate" before any output on every attempt |
      | a stalled stream   | the provider breaks the stream with "stall" before any output on every attempt    |

  # Bytes that are not an event stream may be read as a protocol incompatibility, which the
  # PRD's background lists as unrecoverable; retrying them is advice, not a demand.
  @wire @should
  Scenario: The defaults make exactly 7 attempts when the stream keeps turning to garbage
    Seed 000, line 61: "`ProviderRetryOptions.maxRetries` 默认值为 **6**（失败后最多重试 6 次；总尝试最多 7 次）。"
    Given the provider breaks the stream with "garbage" before any output on every attempt
    When the implementation streams one model call
    Then the server sees exactly 7 attempts

  @wire
  Scenario: Waits grow exponentially
    Seed 000, line 62: "退避策略为指数退避并设置上限"
    Given every attempt answers with status 503
    When the implementation streams one model call
    Then the server sees exactly 7 attempts
    And the waits between attempts grow exponentially

  @wire
  Scenario: With more retries configured, the waits reach a cap
    Seed 000, line 62: "退避策略为指数退避并设置上限"
    Given the implementation is configured with maxRetries = 10
    And every attempt answers with status 503
    When the implementation streams one model call
    Then the server sees exactly 11 attempts
    And the waits between attempts grow exponentially
    And the waits level off at a cap

  @wire
  Scenario: maxRetries = 0 turns retry off
    Seed 000, line 57: "由 `providerRetry.maxRetries > 0` 显式开启。"
    Given the implementation is configured with maxRetries = 0
    And every attempt answers with status 503
    When the implementation streams one model call
    Then the server sees exactly 1 attempt
    And the result has ok false
