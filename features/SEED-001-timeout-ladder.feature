@SEED-001-TIMEOUT-LADDER
Feature: SEED-001 Reasoning-model timeout ladder
  Seed 001 (#922): "reasoning-model first safe-recovery-eligible attempt uses the shorter timeout,
  the automatic safe retry keeps the longer timeout, and no automatic third safe-recovery attempt
  is made"; the tests it asks for name the values: "60s -> 120s". Observability answers "which
  attempt timeout was used".

  @wire @events
  Scenario: A reasoning model that stalls gets 60 s, then 120 s, then stops
    Seed 001, line 50: "reasoning-model first safe-recovery-eligible attempt uses the shorter timeout, the automatic safe retry keeps the longer timeout, and no automatic third safe-recovery attempt is made."
    Seed 001, line 58: "Keep or add processor-level tests for 60s -> 120s, no automatic third safe-recovery attempt, …"
    Given the implementation runs with the "reasoning" profile
    And the provider breaks the stream with "stall" before any output on every attempt
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And attempt 1 lasts between 59 and 65 seconds
    And attempt 2 lasts between 119 and 125 seconds
    And the result has ok false
    And the decisions record the attempt timeouts 60000, 120000 ms
