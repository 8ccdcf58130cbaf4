@herd
Feature: A herd of clients through an outage and under a quota: bounded, recovering, patient, not in lockstep
  Every case runs a herd: `--herd N` instances of the implementation at once (10 by default),
  each at its own base URL under one run, each meeting the script from its own first attempt,
  all sharing the run-wide outage or quota. PRD-0006's constraint: "**预算不放松**：重试不得无限；必须有次数上限 +
  退避，避免重试风暴" (no retry storm: a bound on attempts, and backoff); ECN-0003:
  "maxRetries 默认值为 **6**（失败后最多重试 6 次；总尝试最多 7 次）"; REQ-0006-001: 429 and 5xx
  are retried, the provider's wait honoured ("优先遵循 retryAfterMs"); seed 002: "random_jitter:
  随机抖动（0-1 秒），避免同时重试" (no simultaneous retries).

  # An outage for the whole run outlasts every retry budget ECN-0003 allows (7 attempts, waits
  # under a cap): however a client backs off, a herd multiplies its attempts by its size, no more.
  @REQ-0006-002 @wire
  Scenario: Through an outage longer than any retry budget, each client gives up after 7 attempts
    Seed 000, line 41: "**预算不放松**：重试不得无限；必须有次数上限 + 退避，避免重试风暴。"
    Seed 000, line 61: "`ProviderRetryOptions.maxRetries` 默认值为 **6**（失败后最多重试 6 次；总尝试最多 7 次）。"
    Given an outage answers every model request with status 503 for the whole run
    When a herd of clients each streams one model call
    Then every client of the herd makes at most 7 attempts
    And every client of the herd ends with ok false

  # Each client meets three failures of its own, well inside the six retries ECN-0003 gives by
  # default (REQ-0006-002): every client must come back. A client that retries a 5xx once (the
  # pre-PRD habit) gives up. (Each client's own attempts, not a window of run time: instances
  # that start slowly would miss a short outage.)
  @REQ-0006-002 @wire
  Scenario: After three failures each, every client of the herd recovers
    Seed 000, line 61: "`ProviderRetryOptions.maxRetries` 默认值为 **6**（失败后最多重试 6 次；…）。"
    Given attempt 1 answers with status 503
    And attempt 2 answers with status 503
    And attempt 3 answers with status 503
    And attempt 4 succeeds
    When a herd of clients each streams one model call
    Then every client of the herd ends with ok true

  # Clients that failed together must not retry together. A herd of 10 or more with seed 002's
  # 0-1 s jitter spreads its first retries over 0.2 s but 4 times in a million; without jitter the
  # spread is 0. At 1/5 of real time 0.2 s is 40 ms real, wide against the client's reaction.
  # 429 is the failure every client retries.
  @SEED-002-JITTER @wire
  Scenario: Clients that failed at once spread their first retries
    Seed 002, line 43: "random_jitter: 随机抖动（0-1 秒），避免同时重试"
    Given timing is measured at 1/5 of real time
    And attempt 1 answers with status 429
    And attempt 2 succeeds
    When a herd of clients each streams one model call
    Then the herd's first retries spread over at least 0.2 seconds

  # PRD-0006 asks for backoff, not jitter: under the PRD's own profile the spread is advice.
  @REQ-0006-002 @wire
  Scenario: Clients that failed at once ideally spread their first retries
    Seed 000, line 41: "**预算不放松**：重试不得无限；必须有次数上限 + 退避，避免重试风暴。"
    Given timing is measured at 1/5 of real time
    And attempt 1 answers with status 429
    And attempt 2 succeeds
    When a herd of clients each streams one model call
    Then ideally the herd's first retries spread over at least 0.2 seconds
    And every client of the herd ends with ok true

  # A rate quota the whole herd shares, as a team's workers share a provider's requests per
  # minute: a real token bucket of 2 requests a minute, whose 429s say in retry-after when a
  # request fits again (up to 30 s). REQ-0006-001: "优先遵循 retryAfterMs" — every refused client
  # waits what it was asked, whoever else is waiting. A client that backs off instead (ECN-0003's
  # 1 s, 2 s, 4 s, ...) comes back many seconds early and is refused again. Two requests a
  # minute leave most of any herd of 10 or more refused, however far apart its clients start.
  @REQ-0006-001 @wire
  Scenario: Under a quota the herd shares, every client waits each 429's retry-after
    Seed 000, line 48: "`ProviderRateLimitException`（429）：优先遵循 `retryAfterMs`（可配置是否启用）。"
    Given a quota shared by every client admits 2 requests a minute
    When a herd of clients each streams one model call
    Then every client of the herd waits each 429's retry-after before its next attempt

  # Seed 004's batch: a scan calls the model once per module, all at once, and each call must
  # degrade rather than fail "满足 SC-002（≤5 分钟）" — every one of them, not only the first. Each
  # client is one module's call; every attempt of every client stalls before any output. A
  # step starting `every client of the herd:` judges its check on each client alone.
  @SEED-004-DEGRADE @wire @events
  Scenario: A batch of module calls against a stalled provider each degrades within 5 minutes
    Seed 004, line 111: "当 `generateSpec` 成功降级（返回而非抛出），batch-orchestrator 应将该模块记录为 `degraded` 状态。"
    Seed 004, line 119: "满足 SC-002（≤5 分钟）"
    Given the implementation runs with the "fast-fail" profile
    And a fallback answering "AST-only summary" is attached
    And the provider breaks the stream with "stall" before any output on every attempt
    When a herd of clients each streams one model call
    Then every client of the herd: the call ends within 300 seconds
    And every client of the herd: the result records the degradation and its cause

  # REQ-0006-030 at fleet scale: many users' main sessions meet the same failing deep research
  # at once. Seed 000: "复现失败时不再出现短时间内多个 deep-research session 连锁创建" — for each
  # session, so the herd starts one sub-session a client, not one per failure; the vision's
  # storm is "100+ turn / 多 session 连锁". The sub-session's 400 is final (REQ-0006-001), so each
  # sub-session request is a session started.
  @REQ-0006-030 @tasks
  Scenario: A herd of main sessions whose model keeps asking for deep research starts one each
    Seed 000, line 88: "复现失败时不再出现短时间内多个 deep-research session 连锁创建。"
    Given the scenario "stubborn-model-relaunches-deep-research"
    When a herd of clients each runs a main-session turn
    Then every client of the herd: the deep-research sub-session is started exactly once
    And every client of the herd: the main session makes fewer than 100 requests
