@SEED-001-GATE
Feature: SEED-001 Safety gate: no automatic replay once a replay is unsafe
  Seed 001: "Safe-recovery checks still block automatic retry after visible output, text output,
  reasoning output where applicable, tool input, materialized tool calls, tool execution, …,
  quota, context overflow, and other non-retryable failures", and "Tests cover both the allowed
  safe-recovery path and conservative blocked paths". The decision record says why the gate
  blocked a replay; the reason's exact name (events.md) is advice.

  @wire @events
  Scenario: No replay after text reached the user
    Seed 001, line 49: "Safe-recovery checks still block automatic retry after visible output, text output, …"
    Given attempt 1 streams "Here is the first half of the answer and" and breaks with "eof" after 4 output deltas
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 1 attempt
    And the result has ok false
    And the last decision says the gate blocked the retry
    And ideally the last decision says the gate blocked the retry for "visible_output"

  @wire @events
  Scenario: No replay after a tool call started
    Seed 001, line 49: "Safe-recovery checks still block automatic retry after … tool input, materialized tool calls, tool execution, …"
    Given attempt 1 streams a call to tool "write_file" and breaks with "reset" after 1 output delta
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 1 attempt
    And the result has ok false
    And the last decision says the gate blocked the retry
    And ideally the last decision says the gate blocked the retry for "tool_call"

  @wire @events
  Scenario: Quota is never retried, even though it arrives as a 429
    Seed 001, line 49: "Safe-recovery checks still block automatic retry after … quota, …"
    Given attempt 1 answers with status 429 and error code "insufficient_quota"
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 1 attempt
    And the result has ok false
    And the last decision says the retry was not made
    And ideally the last decision says the gate blocked the retry for "quota"
    And ideally the runtime.error has error_type "ProviderQuotaException"

  @wire @events
  Scenario: Context overflow is never retried
    Seed 001, line 49: "Safe-recovery checks still block automatic retry after … context overflow, and other non-retryable failures."
    Given attempt 1 fails in the stream with "context_length_exceeded"
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 1 attempt
    And the result has ok false
    And the last decision says the retry was not made
    And ideally the last decision says the gate blocked the retry for "context_overflow"
    And ideally the runtime.error has error_type "ProviderContextOverflowException"

  @wire @events
  Scenario: A break before anything reached the user is replayed
    Seed 001, line 52: "Tests cover both the allowed safe-recovery path and conservative blocked paths."
    Given the provider breaks the stream with "eof" before any output on attempt 1
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And the result is a success
    And the first decision says the gate allowed the retry
