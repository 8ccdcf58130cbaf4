@REQ-0006-010
Feature: REQ-0006-010 Stream breaks become ProviderTimeoutException and are retried
  The provider does not surface a raw EOFException: EOF, connection reset and the like are
  wrapped as ProviderTimeoutException (provider phase) and enter the retry logic.

  @wire @events
  Scenario Outline: A stream broken by <fault> is retried as a ProviderTimeoutException
    Given the provider breaks the stream with "<fault>" after 2 events on attempt 1
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And the result is a success
    And the retry is recorded as a "ProviderTimeoutException"

    Examples:
      | fault    |
      | eof      |
      | reset    |
      | truncate |
      | stall    |
      | garbage  |

  @wire
  Scenario: The PRD's own example: a reset after 3 events on attempt 1
    Given the provider resets the stream after 3 events on attempt 1
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 2 attempts

  @events
  Scenario: A stream that keeps breaking ends in a provider-phase ProviderTimeoutException
    Given the provider breaks the stream with "eof" after 2 events on every attempt
    When the implementation streams one model call
    Then the events contain exactly 1 "runtime.error"
    And the runtime.error has phase "provider" and error_type "ProviderTimeoutException"
