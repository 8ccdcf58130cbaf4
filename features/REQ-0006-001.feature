@REQ-0006-001
Feature: REQ-0006-001 Generic provider retry
  providerRetry covers ProviderRateLimitException (429, honouring Retry-After),
  ProviderTimeoutException (exponential backoff), and ProviderHttpException for
  408/425/429/500/502/503/504; every other status is final. After max retries the run
  ends with runtime.error and Result(stop_reason="error").

  @wire @events
  Scenario: A timeout on the first attempt, then success, ends without runtime.error
    Given attempt 1 sends no headers for 120 seconds
    And attempt 2 succeeds with "Answered after a timeout"
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And the result is a success with final text "Answered after a timeout"
    And the events contain no "runtime.error"

  @wire @events
  Scenario: A 5xx on the first attempt, then success
    Given attempt 1 answers with status 502
    And attempt 2 succeeds with "Answered after a 502"
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And the result is a success with final text "Answered after a 502"
    And the events contain no "runtime.error"

  @wire
  Scenario Outline: Status <status> is retried
    Given attempt 1 answers with status <status>
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And the result is a success

    Examples:
      | status |
      | 408    |
      | 425    |
      | 429    |
      | 500    |
      | 502    |
      | 503    |
      | 504    |

  @wire @events
  Scenario Outline: Status <status> is final
    Given attempt 1 answers with status <status>
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 1 attempt
    And the result has stop_reason "error"
    And the events contain exactly 1 "runtime.error"

    Examples:
      | status |
      | 400    |
      | 401    |
      | 403    |
      | 404    |
      | 422    |

  @wire
  Scenario Outline: A 429 with <form> is honoured
    Given timing is measured at 1/20 of real time
    And attempt 1 answers with status 429 and header "<header>" set to "<value>"
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And attempt 2 starts at least <wait> seconds after attempt 1 ends
    And attempt 2 starts within <most> seconds after attempt 1 ends

    Examples:
      | form                          | header         | value    | wait | most |
      | retry-after-ms                | retry-after-ms | 1500     | 1.5  | 2.5  |
      | retry-after in seconds        | retry-after    | 3        | 3    | 4    |
      | retry-after as an HTTP-date   | retry-after    | @now+3s  | 3    | 4.5  |

  @events
  Scenario: Exhausting the retries ends in runtime.error and stop_reason error
    Given every attempt answers with status 503
    When the implementation streams one model call
    Then the events contain exactly 1 "runtime.error"
    And the runtime.error has phase "provider" and error_type "ProviderHttpException"
    And the result has stop_reason "error"
    And the result has ok false

  @wire @should
  Scenario: x-should-retry false from the server overrides the status rule
    Given attempt 1 answers with status 503 and header "x-should-retry" set to "false"
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 1 attempt

  @wire @should
  Scenario: An in-stream rate limit waits as long as it asks
    Given attempt 1 fails in the stream with "rate_limit_exceeded" and message "Rate limit reached. Please try again in 2s."
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And attempt 2 starts at least 2 seconds after attempt 1 ends
