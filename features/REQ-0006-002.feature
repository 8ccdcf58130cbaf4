@REQ-0006-002
Feature: REQ-0006-002 Retry is bounded, on by default (ECN-0003)
  maxRetries defaults to 6 (7 attempts at most), with capped exponential backoff.
  Nothing retries forever.

  @wire
  Scenario: The default configuration makes exactly 7 attempts against a provider that always fails
    Given every attempt answers with status 429
    When the implementation streams one model call
    Then the server sees exactly 7 attempts

  @wire
  Scenario: Waits grow exponentially up to a cap
    Given every attempt answers with status 429
    When the implementation streams one model call
    Then the waits between attempts grow at least 1.5x each until they reach a cap
    And no wait between attempts is longer than 60 seconds

  @wire
  Scenario: A stream that always breaks is not retried forever
    Given the provider breaks the stream with "reset" after 2 events on every attempt
    When the implementation streams one model call
    Then the server sees at most 7 attempts
