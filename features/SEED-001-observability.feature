@SEED-001-OBSERVABILITY
Feature: SEED-001 Observability: every failure has a decision record
  Seed 001: "Observability can answer: whether the failure was technically retryable, whether the
  safety gate allowed it, whether a retry was attempted, which attempt timeout was used, and how
  the retry ended", with "retry decision metadata" that UI and exports read instead of
  re-deriving predicates. The record's values are judged, not only its keys, and the wait it
  announces is the wait the wire saw.

  @events
  Scenario: Every failure carries a decision record with its values
    Seed 001, line 53: "Observability can answer: whether the failure was technically retryable, whether the safety gate allowed it, whether a retry was attempted, which attempt timeout was used, and how the retry ended."
    Given attempt 1 answers with status 429
    And attempt 2 answers with status 503
    And attempt 3 answers with status 400
    When the implementation streams one model call
    Then every failure has a decision record with values
    And the decisions count the attempts up from 1
    And the last decision says the retry was not made
    And each provider.retry delay matches the wait the server saw
