"""Drive the official `anthropic` Python SDK's `AnthropicBedrock` client against squall, each
run's URL as its base URL (fake AWS credentials, SigV4-signed through botocore), and check it
parses every reply of Bedrock's InvokeModel: the Messages events each in an event-stream `chunk`
(text; thinking, text and a tool use), the whole message, an in-stream exception, a status.

Usage: python parse_anthropic_bedrock.py  (reads SQUALL_RUNS: a JSON object of case name -> base URL)
"""

import json
import os

import anthropic
from anthropic import AnthropicBedrock

from checker_kit import expect, run_cases

RUNS = json.loads(os.environ["SQUALL_RUNS"])
MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
MESSAGES = [{"role": "user", "content": "hi"}]


def client(case):
    return AnthropicBedrock(base_url=RUNS[case], aws_region="us-east-1", aws_access_key="AKIASQUALLTEST",
                            aws_secret_key="squall-test-secret", max_retries=0, timeout=10)


def stream_text():
    with client("text").messages.stream(model=MODEL, max_tokens=64, messages=MESSAGES) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    expect(text == "The quick brown fox", f"text {text!r}")
    expect(final.stop_reason == "end_turn", f"stop reason {final.stop_reason}")


def stream_thinking_text_and_a_tool_use():
    with client("rich").messages.stream(model=MODEL, max_tokens=64, messages=MESSAGES) as stream:
        final = stream.get_final_message()
    kinds = [block.type for block in final.content]
    expect(kinds == ["thinking", "text", "tool_use"], f"blocks {kinds}")
    expect(final.content[2].input == {"agent": "deep-research", "prompt": "x"}, f"{final.content[2]}")


def invoke_whole():
    message = client("rich").messages.create(model=MODEL, max_tokens=64, messages=MESSAGES)
    expect(message.content[1].text == "Let me delegate.", f"{message.content}")
    expect(message.stop_reason == "tool_use", f"{message.stop_reason}")


def an_exception_in_the_stream_is_raised():
    try:
        with client("throttled").messages.stream(model=MODEL, max_tokens=64, messages=MESSAGES) as stream:
            for _ in stream:
                pass
    except anthropic.APIStatusError as error:
        expect("throttlingException" in str(error), f"{error!r}")
        return
    raise AssertionError("no APIStatusError")


def a_status_is_its_error():
    try:
        client("rate_limited").messages.create(model=MODEL, max_tokens=64, messages=MESSAGES)
    except anthropic.RateLimitError as error:
        expect(error.status_code == 429, f"status {error.status_code}")
        return
    raise AssertionError("no RateLimitError")


run_cases("AnthropicBedrock (python)", [stream_text, stream_thinking_text_and_a_tool_use, invoke_whole,
                                        an_exception_in_the_stream_is_raised, a_status_is_its_error])
