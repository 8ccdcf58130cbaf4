Feature: SEED-002 Adaptive retry strategy: per-agent defaults, jitter, same session
  Seed 002: per agent, "| Coder | 0 | ✅ 是 | 有写入副作用，默认不重试 |" and "| Codex | 1 | ✅ 是 | 只读操作，默认允许 1 次重试 |";
  "等待时间 = base_delay × (2 ^ retry_count) + random_jitter", "base_delay: 基础延迟（默认 1 秒）",
  "random_jitter: 随机抖动（0-1 秒），避免同时重试", with the table 1-2, 2-3, 4-5, 8-9, 16-17 s for
  the first five retries; "重试时必须使用相同的 SESSION_ID".

  @wire @SEED-002-PROFILES
  Scenario: A writing agent does not retry
    Seed 002, line 29: "| Coder | 0 | ✅ 是 | 有写入副作用，默认不重试 |"
    Given the implementation runs with the "writer" profile
    And every attempt answers with status 429
    When the implementation streams one model call
    Then the server sees exactly 1 attempt
    And the result has ok false

  @wire @SEED-002-PROFILES
  Scenario: A read-only agent retries once
    Seed 002, line 30: "| Codex | 1 | ✅ 是 | 只读操作，默认允许 1 次重试 |"
    Given the implementation runs with the "read-only" profile
    And every attempt answers with status 429
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And the result has ok false

  # Telling seed 002's jitter from none needs each wait to 0.05 s of policy time: squall runs the
  # case as slowly as the client's measured reaction needs (docs/requirements.md, Timing).
  # Five retries are what the seed's table shows; 429 is the failure every client retries.
  @wire @SEED-002-JITTER
  Scenario: Waits follow 1 s × 2^n plus a random jitter of 0 to 1 s
    Seed 002, line 38: "等待时间 = base_delay × (2 ^ retry_count) + random_jitter"
    Seed 002, line 43: "random_jitter: 随机抖动（0-1 秒），避免同时重试"
    Given the implementation is configured with maxRetries = 5
    And every attempt answers with status 429
    When the implementation streams one model call
    Then the first 5 waits follow 1 s × 2^n plus a jitter between 0 and 1 s
    And the waits carry a random jitter

  @wire @SEED-002-SESSION
  Scenario: Retries keep the session id
    Seed 002, line 139: "重试时必须使用相同的 SESSION_ID"
    Given attempt 1 answers with status 429
    And attempt 2 answers with status 429
    And attempt 3 succeeds
    When the implementation streams one model call
    Then every attempt carries the same session id
