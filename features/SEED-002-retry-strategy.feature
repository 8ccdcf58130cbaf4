Feature: SEED-002 Adaptive retry strategy: per-agent defaults, jitter, same session
  A writing agent does not retry by default (side effects), a read-only agent retries once;
  waits follow base × 2^n + jitter(0..1 s); retries keep the session id.

  @wire @SEED-002-PROFILES
  Scenario: A writing agent does not retry
    Given the implementation runs with the "writer" profile
    And every attempt answers with status 429
    When the implementation streams one model call
    Then the server sees exactly 1 attempt

  @wire @SEED-002-PROFILES
  Scenario: A read-only agent retries once
    Given the implementation runs with the "read-only" profile
    And every attempt answers with status 429
    When the implementation streams one model call
    Then the server sees exactly 2 attempts

  @wire @should @SEED-002-JITTER
  Scenario: Waits stay within a second of the doubling schedule
    Given timing is measured at 1/20 of real time
    And every attempt answers with status 429
    When the implementation streams one model call
    Then the waits stay within 1 second of a doubling schedule

  @wire @should @SEED-002-SESSION
  Scenario: Retries keep the session id
    Given attempt 1 answers with status 429
    And attempt 2 answers with status 429
    And attempt 3 succeeds
    When the implementation streams one model call
    Then every attempt carries the same session id
