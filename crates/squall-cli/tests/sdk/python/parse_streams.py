"""Drive the official `openai` Python SDK against squall and check it parses every reply.

Usage: python parse_streams.py  (reads SQUALL_RUNS: a JSON object of case name -> base URL)
Each case checks that the SDK turns squall's bytes into its own typed objects, event by
event. Exits non-zero with the failing case named on stderr.
"""

import json
import os

import openai
from openai import BaseModel, OpenAI
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseFailedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseTextDeltaEvent,
)

from checker_kit import expect, run_cases

RUNS = json.loads(os.environ["SQUALL_RUNS"])


def client(case):
    return OpenAI(base_url=RUNS[case], api_key="sk-squall-test", max_retries=0, timeout=10)


def responses_stream_text():
    events = list(client("text").responses.create(model="gpt-test", input="hi", stream=True))
    expect(isinstance(events[0], ResponseCreatedEvent), f"first event is {type(events[0]).__name__}")
    text = "".join(e.delta for e in events if isinstance(e, ResponseTextDeltaEvent))
    expect(text == "The quick brown fox", f"text {text!r}")
    last = events[-1]
    expect(isinstance(last, ResponseCompletedEvent), f"last event is {type(last).__name__}")
    expect(last.response.usage.total_tokens > 0, "usage is parsed")
    expect([e.sequence_number for e in events] == list(range(len(events))), "sequence numbers")


def responses_stream_helper():
    # The SDK's accumulating helper validates the event order and builds the final Response.
    # It wraps some events in its own subclasses (with a running snapshot), so check by type.
    with client("rich").responses.stream(model="gpt-test", input="hi") as stream:
        events = list(stream)
        final = stream.get_final_response()
    untyped = [e for e in events if not isinstance(e, BaseModel)]
    expect(not untyped, f"events left untyped: {untyped[:3]}")
    kinds = {e.type: e for e in events}
    reasoning = kinds.get("response.reasoning_summary_text.delta")
    expect(isinstance(reasoning, ResponseReasoningSummaryTextDeltaEvent), f"reasoning delta {type(reasoning)}")
    arguments = kinds.get("response.function_call_arguments.delta")
    expect(isinstance(arguments, ResponseFunctionCallArgumentsDeltaEvent), f"arguments delta {type(arguments)}")
    calls = [item for item in final.output if item.type == "function_call"]
    expect(calls and calls[0].name == "Task", f"final output {final.output}")
    expect(json.loads(calls[0].arguments) == {"agent": "deep-research", "prompt": "x"}, calls[0].arguments)
    expect(final.output_text == "Let me delegate.", f"output_text {final.output_text!r}")


def responses_not_streamed():
    response = client("text").responses.create(model="gpt-test", input="hi")
    expect(response.output_text == "The quick brown fox", f"output_text {response.output_text!r}")


def responses_stream_failed():
    events = list(client("failed").responses.create(model="gpt-test", input="hi", stream=True))
    last = events[-1]
    expect(isinstance(last, ResponseFailedEvent), f"last event is {type(last).__name__}")
    expect(last.response.error.code == "rate_limit_exceeded", f"error {last.response.error}")


def rate_limited_status():
    try:
        client("rate_limited").responses.create(model="gpt-test", input="hi")
    except openai.RateLimitError as error:
        expect(error.status_code == 429, f"status {error.status_code}")
        expect(error.response.headers["retry-after"] == "2", "retry-after header")
        expect(error.code == "rate_limit_exceeded", f"code {error.code}")
        return
    raise AssertionError("a 429 must raise RateLimitError")


def chat_stream_tool_call():
    chunks = list(client("rich").chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    expect(text == "Let me delegate.", f"text {text!r}")
    arguments = "".join(
        call.function.arguments or ""
        for c in chunks if c.choices and c.choices[0].delta.tool_calls
        for call in c.choices[0].delta.tool_calls
    )
    expect(json.loads(arguments) == {"agent": "deep-research", "prompt": "x"}, arguments)
    expect(chunks[-1].choices[0].finish_reason == "tool_calls", "finish_reason")


def reset_mid_stream():
    # The SDK reports a transport failure mid-body as APIConnectionError caused by httpx.
    seen = []
    try:
        for event in client("reset").responses.create(model="gpt-test", input="hi", stream=True):
            seen.append(event.type)
    except openai.APIConnectionError as error:
        causes = []
        cause = error
        while cause is not None:
            causes.append(repr(cause))
            cause = cause.__cause__ or cause.__context__
        expect(any("reset" in c.lower() for c in causes), f"no connection reset in {causes}")
        expect(len(seen) == 4, f"events before the reset: {seen}")
        return
    raise AssertionError("a reset stream must raise")


CASES = [
    responses_stream_text,
    responses_stream_helper,
    responses_not_streamed,
    responses_stream_failed,
    rate_limited_status,
    chat_stream_tool_call,
    reset_mid_stream,
]

run_cases(f"openai {openai.__version__}", CASES)
