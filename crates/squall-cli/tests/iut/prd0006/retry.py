"""Provider retry as PRD-0006 asks: which failures are retried, how long to wait, when to stop,
and an event for each decision.

- Retried (REQ-0006-001): 408/425/429/500/502/503/504, timeouts, and stream breaks (EOF, reset,
  truncation; REQ-0006-010). Not retried: other statuses, quota, context overflow, bytes that
  are not an event stream (a protocol incompatibility, unrecoverable per the PRD's background).
- Never replayed (seed 001): an attempt whose text reached the user or whose tool call started.
- Limits: maxRetries 6 by default (ECN-0003), or SQUALL_MAX_RETRIES; per-profile limits.
- Waits: seed 002's 1 s x 2^n plus 0-1 s of jitter, capped at 20 s; a Retry-After replaces it.
  PRD0006_JITTER=full draws each wait from 0 to that backoff instead (botocore's full jitter, a
  random share of min(20 s, 1 s x 2^n)): how the suite's tests play a client whose waits one run
  cannot judge.
"""

import email.utils
import json
import os
import random
import threading
import threading
import time

import bugs
from wire import ProviderError

RETRYABLE_STATUSES = {408, 425, 429, 500, 502, 503, 504}

FULL_JITTER = os.environ.get("PRD0006_JITTER", "") == "full"


class Policy:
    def __init__(self, profile, max_retries, seed):
        self.max_retries = 6
        self.timeouts = None  # a timeout per attempt, in seconds, for the reasoning ladder
        self.timeout_s = 60.0
        self.limits = {}  # error kind -> total attempts
        self.total_s = None
        if profile == "fast-fail":  # seed 004
            self.max_retries, self.limits, self.total_s = 2, {"timeout": 2, "rate_limit": 3, "server": 3}, 300.0
        elif profile == "writer":  # seed 002
            self.max_retries = 0
        elif profile == "read-only":
            self.max_retries = 1
        elif profile == "reasoning":  # seed 001
            self.timeouts = [60.0, 120.0]
        if max_retries is not None:
            self.max_retries = max_retries
        if bugs.on("retry-once-except-429"):
            self.limits = {"timeout": 2, "server": 2}
        if bugs.on("never-retries"):
            self.max_retries = 0
        self.random = random.Random(seed)

    def attempts_for(self, kind):
        limit = self.max_retries + 1
        if self.timeouts is not None:
            limit = min(limit, len(self.timeouts))
        return min(limit, self.limits.get(kind, limit))

    def timeout_for(self, attempt):
        if self.timeouts is not None and attempt < len(self.timeouts):
            return self.timeouts[attempt]
        return self.timeout_s

    def backoff(self, retry):
        base = 1.0 * (retry + 1) if bugs.on("linear-backoff") else 1.0 * 2**retry
        if FULL_JITTER:
            return self.random.random() * min(base, 20.0)
        jitter = 0.0 if bugs.on("zero-jitter") else self.random.random()
        return min(base + jitter, 20.0)

    def unscaled_backoff(self, retry):
        """Real seconds: what a client whose sleeps cannot be scaled waits."""
        return 0.5 * 1.5**retry * self.random.uniform(0.5, 1.5)


class Overhead:
    """Real time of the client's own before each retry, from PRD0006_OVERHEAD_MS ("150", or
    "20-300" for a fresh draw each time): how the suite's tests play a slow or jittery client on a
    busy machine. PRD0006_OVERHEAD_AFTER=KIND spends it only after that kind of failure
    (`stream_error`, `status`, …), as a client whose work differs by path. It is not policy: it is
    not scaled, and the client's sense of elapsed policy time leaves it out. On a sped-up clock
    (SQUALL_CLOCK=accelerated) it stays real time, as work would: it sleeps SQUALL_CLOCK_RATE
    times as long on the client's own clock."""

    def __init__(self):
        text = os.environ.get("PRD0006_OVERHEAD_MS", "")
        low, _, high = text.partition("-")
        self.low_s = float(low) / 1000.0 if low else 0.0
        self.high_s = float(high) / 1000.0 if high else self.low_s
        sped_up = os.environ.get("SQUALL_CLOCK") == "accelerated"
        self.rate = float(os.environ.get("SQUALL_CLOCK_RATE", "1")) if sped_up else 1.0
        self.after = os.environ.get("PRD0006_OVERHEAD_AFTER")
        self.random = random.Random()
        self.spent_s = 0.0

    def spend(self, failure):
        if self.high_s > 0 and self.after in (None, failure.kind):
            overhead = self.random.uniform(self.low_s, self.high_s) * self.rate
            time.sleep(overhead)
            self.spent_s += overhead


def error_type(error):
    """The PRD-0006 exception name for a failed attempt."""
    if error.kind == "status":
        if error.code == "insufficient_quota":
            return "ProviderQuotaException"
        return "ProviderRateLimitException" if error.status == 429 else "ProviderHttpException"
    if error.kind == "timeout":
        return "ProviderTimeoutException"
    if error.kind in ("eof", "reset", "truncated", "connect"):
        return "ProviderStreamException"
    if error.kind == "stream_error":
        if error.code == "context_length_exceeded":
            return "ProviderContextOverflowException"
        return "ProviderRateLimitException" if error.code == "rate_limit_exceeded" else "ProviderHttpException"
    return "ProviderProtocolException"


def kind_of(error):
    """The limit family a failure counts against."""
    if error.kind in ("timeout", "eof", "reset", "truncated", "connect"):
        return "timeout"
    if error.status == 429 or error.code == "rate_limit_exceeded":
        return "rate_limit"
    return "server"


def retryable(error):
    if error.kind == "status":
        return error.status in RETRYABLE_STATUSES and error.code != "insufficient_quota"
    if error.kind == "stream_error":
        return error.code in ("rate_limit_exceeded", "server_error")
    return error.kind in ("timeout", "eof", "reset", "truncated", "connect")


def gate(error, shows_output):
    """Whether replaying the attempt is safe, and if not why."""
    if error.code == "insufficient_quota":
        return "quota"
    if error.code == "context_length_exceeded":
        return "context_overflow"
    if error.saw_tool_call:
        return "tool_call"
    if error.saw_text and shows_output:
        return "visible_output"
    return "allowed"


def retry_after(error):
    """The wait the provider asked for, in seconds, or None."""
    headers = error.headers
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000.0
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def call_with_retries(attempt, policy, scale, events, shows_output=True):
    """Run `attempt(timeout_s)` until it succeeds or the policy says stop.

    Returns the reply, or raises ProviderError after writing one runtime.error. `scale` turns
    policy seconds into real seconds (SQUALL_TIME_SCALE).
    """
    started = time.monotonic()
    overhead = Overhead()
    number = 0
    while True:
        timeout = policy.timeout_for(number)
        try:
            return attempt(timeout * scale)
        except ProviderError as error:
            failure = error
        number += 1
        kind = kind_of(failure)
        allowed = policy.attempts_for(kind)
        technically = retryable(failure)
        verdict = gate(failure, shows_output)
        asked = None if bugs.on("backoff-over-retry-after") else retry_after(failure)
        wait = asked if asked is not None else policy.backoff(number - 1)
        elapsed = (time.monotonic() - started - overhead.spent_s) / scale
        if not technically:
            outcome = "not_retryable"
        elif verdict != "allowed":
            outcome = "blocked_by_gate"
        elif number >= allowed:
            outcome = "exhausted"
        elif policy.total_s is not None and elapsed + wait >= policy.total_s:
            outcome = "time_budget_exhausted"
        else:
            outcome = "retrying"
        decision = {
            "attempt": number,
            "max_attempts": allowed,
            "error_type": error_type(failure),
            "error_message": str(failure),
            "status": failure.status,
            "technically_retryable": technically,
            "gate": verdict,
            "retried": outcome == "retrying",
            "timeout_ms": int(timeout * 1000),
            "delay_ms": int(wait * 1000) if outcome == "retrying" else None,
            "delay_source": ("retry-after" if asked is not None else "backoff") if outcome == "retrying" else None,
            "outcome": outcome,
        }
        if outcome != "retrying":
            events.emit({"type": "runtime.error", "phase": "provider", "error_type": decision["error_type"],
                         "error_message": decision["error_message"], "decision": decision})
            raise failure
        events.emit({"type": "provider.retry", "attempt": number, "max_attempts": allowed, "delay_ms": decision["delay_ms"],
                     "error_type": decision["error_type"], "reason": str(failure), "timeout_ms": decision["timeout_ms"],
                     "decision": decision})
        overhead.spend(failure)
        slept = wait * 3 if bugs.on("sleep-3x-announced") and asked is None else wait
        pause(policy.unscaled_backoff(number - 1) if bugs.on("unscaled-backoff") else slept * scale)


def pause(seconds):
    """Wait between attempts: with time.sleep, or — PRD0006_WAIT=event — on a thread primitive
    with a timeout (threading.Event().wait), as clients that wait on a lock, queue or thread do."""
    if os.environ.get("PRD0006_WAIT") == "event":
        threading.Event().wait(seconds)
    else:
        time.sleep(seconds)


class Events:
    """events.jsonl, one JSON object a line, flushed as it happens."""

    def __init__(self, path):
        self.path = path
        self.file = open(path, "a", encoding="utf-8")

    def emit(self, event):
        self.file.write(json.dumps(event, ensure_ascii=False) + "\n")
        self.file.flush()

    def close(self):
        self.file.close()
