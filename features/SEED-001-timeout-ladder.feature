@SEED-001-TIMEOUT-LADDER
Feature: SEED-001 Reasoning-model timeout ladder
  A reasoning model's first attempt fails fast (60 s), the one automatic safe retry keeps
  the longer protected timeout (120 s), and there is no automatic third attempt.

  @wire
  Scenario: A reasoning model that stalls gets 60 s, then 120 s, then stops
    Given the implementation runs with the "reasoning" profile
    And the provider breaks the stream with "stall" after 2 events on every attempt
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And attempt 1 lasts between 59 and 65 seconds
    And attempt 2 lasts between 119 and 125 seconds
