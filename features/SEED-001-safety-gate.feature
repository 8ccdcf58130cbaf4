@SEED-001-GATE
Feature: SEED-001 Safety gate: no automatic replay once a replay is unsafe
  Retry is technically possible, but a replay after visible output, a materialised tool
  call, quota or context overflow would duplicate what the user saw or cannot succeed.

  @wire @events
  Scenario: No replay after text reached the user
    Given attempt 1 streams "Here is the first half of the answer and" and breaks with "eof" after 8 events
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 1 attempt
    And the last decision says the gate blocked the retry for "visible_output"

  @wire
  Scenario: No replay after a tool call started
    Given attempt 1 streams a call to tool "write_file" and breaks with "reset" after 4 events
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 1 attempt

  @wire
  Scenario: Quota is never retried, even though it arrives as a 429
    Given attempt 1 answers with status 429 and error code "insufficient_quota"
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 1 attempt

  @wire
  Scenario: Context overflow is never retried
    Given attempt 1 fails in the stream with "context_length_exceeded"
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 1 attempt

  @wire
  Scenario: A break before anything reached the user is replayed
    Given the provider breaks the stream with "eof" after 2 events on attempt 1
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 2 attempts

  @events @SEED-001-OBSERVABILITY
  Scenario: Every failure carries a decision record
    Given attempt 1 answers with status 429
    And attempt 2 answers with status 400
    When the implementation streams one model call
    Then every failure has a decision record
    And each provider.retry delay matches the wait the server saw
