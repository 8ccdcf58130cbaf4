"""The deliberate bugs of this implementation, one switched on by PRD0006_BUG=<name>.

Each is a habit seen in real clients. The suite must reject each on exactly the requirements
listed for it in crates/squall-cli/tests/suite/mutation_matrix.rs.
"""

import os

KNOWN = {
    "retry-once-except-429": "the pre-PRD habit: 429 retried 6 times, 5xx, timeouts and breaks once",
    "truncation-is-success": "a stream that ends before its terminal event, cleanly or by EOF, counts as complete",
    "task-ok-to-model": "the Task tool tells the main model ok: true although the research failed",
    "relaunch-inside-task": "the Task tool quietly runs the sub-session a second time after a failure",
    "silent-turn-end": "after refusing a relaunch the turn ends without a word to the user",
    "head-only-budget": "long tool outputs keep their head only",
    "sleep-3x-announced": "the retry loop sleeps three times the backoff it announced",
    "linear-backoff": "waits grow by 1 s a retry (1, 2, 3, ... s plus the jitter) instead of doubling",
    "backoff-over-retry-after": "the provider's Retry-After is not read: its own backoff decides every wait",
    "never-retries": "one attempt per call, whatever is configured (an SDK whose retries are off by default)",
    "zero-jitter": "the backoff has no jitter: a herd that failed together retries together",
    "unscaled-backoff": "its own backoff (0.5 s x 1.5^n, +-50 % jitter) in real seconds, whatever the time scale or Retry-After",
}

ACTIVE = os.environ.get("PRD0006_BUG", "")
if ACTIVE and ACTIVE not in KNOWN:
    raise SystemExit(f"PRD0006_BUG={ACTIVE}: unknown; known: {', '.join(sorted(KNOWN))}")


def on(name):
    """Whether bug `name` is switched on."""
    return ACTIVE == name
