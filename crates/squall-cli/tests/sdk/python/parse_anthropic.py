"""Drive the official `anthropic` Python SDK against squall's Messages API and check it parses
every reply into its own typed objects.

Usage: python parse_anthropic.py  (reads SQUALL_RUNS: a JSON object of case name -> the run's
Anthropic base URL, without /v1). Exits non-zero with the failing case named on stderr.
"""

import json
import os

import anthropic
from anthropic import Anthropic
from anthropic.types import (
    RawContentBlockDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    TextDelta,
)

from checker_kit import expect, run_cases

RUNS = json.loads(os.environ["SQUALL_RUNS"])
ASK = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}


def client(case, max_retries=0):
    return Anthropic(base_url=RUNS[case], api_key="sk-ant-squall-test", max_retries=max_retries, timeout=10)


def raw_events_are_typed():
    events = list(client("text").messages.create(**ASK, stream=True))
    expect(isinstance(events[0], RawMessageStartEvent), f"first event is {type(events[0]).__name__}")
    expect(isinstance(events[-1], RawMessageStopEvent), f"last event is {type(events[-1]).__name__}")
    deltas = [e.delta for e in events if isinstance(e, RawContentBlockDeltaEvent)]
    expect(deltas and all(isinstance(d, TextDelta) for d in deltas), f"deltas {deltas}")
    text = "".join(d.text for d in deltas)
    expect(text == "The quick brown fox", f"text {text!r}")


def stream_helper_builds_the_message():
    with client("text").messages.stream(**ASK) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    expect(text == "The quick brown fox", f"text {text!r}")
    expect(final.stop_reason == "end_turn", f"stop_reason {final.stop_reason}")
    expect(final.usage.output_tokens > 0, "usage is parsed")


def whole_message():
    message = client("text").messages.create(**ASK)
    expect(message.content[0].text == "The quick brown fox", f"content {message.content}")


def thinking_text_and_tool_use():
    with client("rich").messages.stream(**ASK) as stream:
        final = stream.get_final_message()
    kinds = [block.type for block in final.content]
    expect(kinds == ["thinking", "text", "tool_use"], f"blocks {kinds}")
    thinking, text, tool = final.content
    expect(thinking.thinking == "The user wants research." and thinking.signature, f"thinking {thinking}")
    expect(text.text == "Let me delegate.", f"text {text}")
    expect(tool.name == "Task" and tool.input == {"agent": "deep-research", "prompt": "x"}, f"tool_use {tool}")
    expect(final.stop_reason == "tool_use", f"stop_reason {final.stop_reason}")


def overloaded_in_stream():
    seen = []
    try:
        for event in client("overloaded").messages.create(**ASK, stream=True):
            seen.append(event.type)
    except anthropic.APIStatusError as error:
        expect(error.body["error"]["type"] == "overloaded_error", f"body {error.body}")
        expect("message_stop" not in seen, f"events {seen}")
        return
    raise AssertionError("an in-stream error event must raise")


def overloaded_529_is_typed():
    try:
        client("overloaded_status").messages.create(**ASK)
    except anthropic.InternalServerError as error:
        expect(error.status_code == 529, f"status {error.status_code}")
        expect(error.body["error"]["type"] == "overloaded_error", f"body {error.body}")
        return
    raise AssertionError("a 529 must raise InternalServerError")


def overloaded_529_is_retried():
    # The SDK retries 529 by default; squall's run answers 529 (retry-after 1), then text.
    message = client("retried", max_retries=2).messages.create(**ASK)
    expect(message.content[0].text == "The quick brown fox", f"content {message.content}")


def rate_limited_status():
    try:
        client("rate_limited").messages.create(**ASK)
    except anthropic.RateLimitError as error:
        expect(error.status_code == 429, f"status {error.status_code}")
        expect(error.response.headers["retry-after"] == "2", "retry-after header")
        expect(error.body["error"]["type"] == "rate_limit_error", f"body {error.body}")
        return
    raise AssertionError("a 429 must raise RateLimitError")


def reset_mid_stream():
    seen = []
    try:
        for event in client("reset").messages.create(**ASK, stream=True):
            seen.append(event.type)
    except (anthropic.APIConnectionError, OSError, Exception) as error:  # noqa: B014
        expect(not isinstance(error, AssertionError), repr(error))
        # Four events went out before the reset; the SDK hides `ping`.
        expect(seen == ["message_start", "content_block_start", "content_block_delta"], f"events {seen}: {error!r}")
        return
    raise AssertionError("a reset stream must raise")


CASES = [
    raw_events_are_typed,
    stream_helper_builds_the_message,
    whole_message,
    thinking_text_and_tool_use,
    overloaded_in_stream,
    overloaded_529_is_typed,
    overloaded_529_is_retried,
    rate_limited_status,
    reset_mid_stream,
]

run_cases(f"anthropic {anthropic.__version__}", CASES)
