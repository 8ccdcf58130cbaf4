@REQ-0006-030
Feature: REQ-0006-030 No retry storm after a failed deep research
  Seed 000, REQ-0006-030: when Task(deep-research) returns ok=false or stop_reason="error" the
  main session "**不得**自动再次启动 deep-research；应向用户报告失败并给出重试建议". Acceptance: "复现失败时
  不再出现短时间内多个 deep-research session 连锁创建"; the vision names the storm to avoid: "100+
  turn / 多 session 连锁". In this scenario the sub-session fails with a 400, which REQ-0006-001
  never retries, so every sub-session request on the wire is a deep-research session started —
  by the main session or inside the Task tool.

  @tasks
  Scenario: A model that keeps asking for deep research gets exactly one sub-session
    Seed 000, line 88: "复现失败时不再出现短时间内多个 deep-research session 连锁创建。"
    Given the scenario "stubborn-model-relaunches-deep-research"
    When the implementation runs a main-session turn
    Then the deep-research sub-session is started exactly once
    And the main session makes fewer than 100 requests
    And ideally the main session makes at most 5 requests
    And the turn ends with a message that reports the failure and suggests a retry

  # The PRD puts the rule in the system prompt; what it demands is the behaviour above.
  @tasks @should
  Scenario: The main session's instructions state the rule
    Seed 000, line 86: "主会话 system prompt 明确规定：…**不得**自动再次启动 deep-research；应向用户报告失败并给出重试建议。"
    Given the scenario "stubborn-model-relaunches-deep-research"
    When the implementation runs a main-session turn
    Then the main session's instructions forbid relaunching deep research
