@REQ-0006-021
Feature: REQ-0006-021 Deep-research reports are never empty
  On success the report has the sections 执行摘要 / 关键发现 / 详细分析 / 参考来源. On
  failure it states the cause, the sources collected so far and how to resume or retry;
  "(empty)" is never the whole content.

  @tasks
  Scenario: A failed deep research still delivers a useful report
    Given the scenario "deep-research-eof-every-attempt"
    When the implementation runs a deep-research task
    Then the report is not empty and not "(empty)"
    And the report contains "失败原因"
    And the report contains "续跑建议"
    And the report lists the collected sources
    And the report names the sub-session

  @tasks
  Scenario: A deep research that recovers delivers a structured report
    Given the scenario "deep-research-reset-then-ok"
    When the implementation runs a deep-research task
    Then the task result has ok true
    And the report contains "执行摘要"
    And the report contains "关键发现"
    And the report contains "详细分析"
    And the report contains "参考来源"
