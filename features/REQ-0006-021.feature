@REQ-0006-021
Feature: REQ-0006-021 Deep-research reports are never empty
  Seed 000, REQ-0006-021: on success the report has "结构化章节（执行摘要/关键发现/详细分析/参考来源）";
  on failure it has "错误信息、已收集来源指针（至少 URL 列表或 tool-output 路径）、以及“如何续跑/重试”
  的明确指引". Acceptance: "失败时报告文件长度 > 0 且包含“失败原因/续跑建议”关键字；不允许 (empty)
  作为唯一内容". Sources are real: URLs the sub-session's tools returned, or paths that exist.

  @tasks
  Scenario: A failed deep research still delivers a useful report
    Seed 000, line 80: "失败：包含错误信息、已收集来源指针（至少 URL 列表或 tool-output 路径）、以及“如何续跑/重试”的明确指引。"
    Seed 000, line 82: "失败时报告文件长度 > 0 且包含“失败原因/续跑建议”关键字；不允许 `(empty)` 作为唯一内容。"
    Given the scenario "deep-research-eof-every-attempt"
    When the implementation runs a deep-research task
    Then the report is not empty and not "(empty)"
    And the report contains "失败原因"
    And the report contains "续跑建议"
    And the report states the error of the task result
    And the report points to the sources the sub-session collected
    And every path the report names exists
    And the task's events file records the runtime.error

  @tasks
  Scenario: A deep research that recovers delivers a structured report
    Seed 000, line 79: "成功：包含结构化章节（执行摘要/关键发现/详细分析/参考来源）。"
    Given the scenario "deep-research-reset-then-ok"
    When the implementation runs a deep-research task
    Then the task result has ok true
    And the report contains "执行摘要"
    And the report contains "关键发现"
    And the report contains "详细分析"
    And the report contains "参考来源"
