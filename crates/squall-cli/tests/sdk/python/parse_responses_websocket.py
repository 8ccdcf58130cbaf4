"""Drive the official `openai` Python SDK's Responses WebSocket mode (`client.responses.connect()`)
against squall and check it parses every server event into its own typed objects, and sees
each scripted failure as the failure it is.

Usage: python parse_responses_websocket.py  (reads SQUALL_RUNS: a JSON object of case name ->
the run's OpenAI base URL; the SDK derives ws://…/responses from it). Exits non-zero with the
failing case named on stderr.
"""

import json
import os

import openai
import websockets
from openai import OpenAI
from openai.types.responses import ResponseCompletedEvent, ResponseTextDeltaEvent

from checker_kit import expect, run_cases

RUNS = json.loads(os.environ["SQUALL_RUNS"])


def connect(case):
    client = OpenAI(api_key="sk-squall-test", base_url=RUNS[case], max_retries=0)
    return client.responses.connect()


def one_response(connection, text="hello"):
    """Send a response.create and read its events up to the terminal or error event."""
    connection.response.create(model="gpt-squall", input=text)
    events = []
    for event in connection:
        events.append(event)
        if event.type in ("response.completed", "response.failed", "error"):
            break
    return events


def text_of(events):
    return "".join(e.delta for e in events if isinstance(e, ResponseTextDeltaEvent))


def two_turns_on_one_socket():
    with connect("text") as connection:
        first = one_response(connection)
        expect(isinstance(first[-1], ResponseCompletedEvent), f"typed completion {first[-1]!r}")
        expect(text_of(first) == "The quick brown fox", f"first text {text_of(first)!r}")
        expect(first[-1].response.output_text == "The quick brown fox", "the completed response's text")
        second = one_response(connection)
        expect(text_of(second) == "Jumps over", f"second text {text_of(second)!r}")


def reasoning_and_a_function_call():
    with connect("rich") as connection:
        events = one_response(connection)
    done = events[-1].response
    calls = [item for item in done.output if item.type == "function_call"]
    expect(len(calls) == 1 and calls[0].name == "Task", f"calls {calls}")
    expect(json.loads(calls[0].arguments) == {"agent": "deep-research", "prompt": "x"}, calls[0].arguments)
    expect(any(item.type == "reasoning" for item in done.output), "a reasoning item")


def an_error_event_on_the_second_turn():
    with connect("second_turn_429") as connection:
        expect(text_of(one_response(connection)) == "The quick brown fox", "the first turn")
        error = one_response(connection)[-1]
        expect(error.type == "error", f"an error event {error!r}")
        expect(error.status == 429, f"status {error.status}")
        expect(error.error.code == "rate_limit_exceeded", f"code {error.error.code}")
        expect((error.error.headers or {}).get("retry-after") == "2", f"headers {error.error.headers}")
        third = one_response(connection)
        expect(text_of(third) == "The quick brown fox", "the socket outlives the error event")


def a_status_at_the_upgrade():
    try:
        with connect("upgrade_503"):
            pass
    except websockets.exceptions.InvalidStatus as refused:
        expect(refused.response.status_code == 503, f"status {refused.response.status_code}")
        expect(refused.response.headers.get("retry-after") == "1", f"headers {refused.response.headers}")
        return
    raise AssertionError("a 503 at the upgrade must refuse the socket")


def closed(case):
    """The events before the socket ended, and how it ended."""
    seen = []
    try:
        with connect(case) as connection:
            connection.response.create(model="gpt-squall", input="hello")
            for event in connection:
                seen.append(event)
                if event.type == "response.completed":
                    break
    except websockets.exceptions.ConnectionClosed as ended:
        return seen, ended
    raise AssertionError(f"{case}: the socket must close before the completion")


def a_reset_is_an_abnormal_closure():
    seen, ended = closed("reset")
    expect(text_of(seen) == "a b", f"deltas before the reset {text_of(seen)!r}")
    expect(ended.rcvd is None, f"no close frame was received: {ended!r}")


def a_close_frame_with_its_code():
    seen, ended = closed("closed_1011")
    expect(text_of(seen) == "a", f"deltas before the close {text_of(seen)!r}")
    expect(ended.rcvd is not None and ended.rcvd.code == 1011, f"close code: {ended!r}")


CASES = [
    two_turns_on_one_socket,
    reasoning_and_a_function_call,
    an_error_event_on_the_second_turn,
    a_status_at_the_upgrade,
    a_reset_is_an_abnormal_closure,
    a_close_frame_with_its_code,
]

run_cases(f"openai {openai.__version__} over WebSocket", CASES)
