"""Drive boto3's `bedrock-runtime` client against squall, each run's URL as its endpoint (fake
credentials, SigV4-signed), and check it parses every reply: ConverseStream's event-stream
messages (text; reasoning, text and a tool use) and Converse's whole reply, each in-stream
exception, each error status with its `x-amzn-errortype`, a corrupted message CRC, and a reset.

Usage: python parse_bedrock.py  (reads SQUALL_RUNS: a JSON object of case name -> endpoint)
"""

import json
import os

import boto3
import botocore
import urllib3
from botocore.config import Config
from botocore.eventstream import ChecksumMismatch
from botocore.exceptions import ClientError, EventStreamError

from checker_kit import expect, run_cases

RUNS = json.loads(os.environ["SQUALL_RUNS"])
MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
MESSAGES = [{"role": "user", "content": [{"text": "hi"}]}]


def client(case):
    # One attempt: these checks are about parsing; the matrix judges boto3's retries.
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=RUNS[case],
        region_name="us-east-1",
        aws_access_key_id="AKIASQUALLTEST",
        aws_secret_access_key="squall-test-secret",
        config=Config(retries={"total_max_attempts": 1}, read_timeout=10),
    )


def events(case):
    return list(client(case).converse_stream(modelId=MODEL, messages=MESSAGES)["stream"])


def stream_text():
    seen = events("text")
    kinds = [next(iter(event)) for event in seen]
    expect(kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"], f"events {kinds}")
    text = "".join(e["contentBlockDelta"]["delta"]["text"] for e in seen if "contentBlockDelta" in e)
    expect(text == "The quick brown fox", f"text {text!r}")
    expect(seen[-2]["messageStop"]["stopReason"] == "end_turn", f"{seen[-2]}")
    usage = seen[-1]["metadata"]["usage"]
    expect(usage["outputTokens"] > 0 and usage["totalTokens"] > usage["inputTokens"], f"usage {usage}")


def stream_reasoning_text_and_a_tool_use():
    seen = events("rich")
    deltas = [e["contentBlockDelta"]["delta"] for e in seen if "contentBlockDelta" in e]
    reasoning = "".join(d["reasoningContent"]["text"] for d in deltas if "reasoningContent" in d)
    text = "".join(d["text"] for d in deltas if "text" in d)
    arguments = "".join(d["toolUse"]["input"] for d in deltas if "toolUse" in d)
    start = next(e["contentBlockStart"]["start"]["toolUse"] for e in seen if "contentBlockStart" in e)
    expect(reasoning == "The user wants research." and text == "Let me delegate.", f"{reasoning!r} {text!r}")
    expect(start["name"] == "Task" and start["toolUseId"], f"tool use {start}")
    expect(json.loads(arguments) == {"agent": "deep-research", "prompt": "x"}, f"arguments {arguments!r}")
    expect(seen[-2]["messageStop"]["stopReason"] == "tool_use", f"{seen[-2]}")


def converse_whole():
    reply = client("rich").converse(modelId=MODEL, messages=MESSAGES)
    content = reply["output"]["message"]["content"]
    expect(content[0]["reasoningContent"]["reasoningText"]["text"] == "The user wants research.", f"{content}")
    expect(content[1]["text"] == "Let me delegate.", f"{content}")
    expect(content[2]["toolUse"]["input"] == {"agent": "deep-research", "prompt": "x"}, f"{content}")
    expect(reply["stopReason"] == "tool_use" and reply["usage"]["inputTokens"] > 0, f"{reply}")


def in_stream_exception(case, code, message_part):
    def check():
        try:
            events(case)
        except EventStreamError as error:
            expect(error.response["Error"]["Code"] == code, f"code {error.response['Error']}")
            expect(message_part in error.response["Error"]["Message"], f"message {error.response['Error']}")
            return
        raise AssertionError(f"no EventStreamError for {case}")

    check.__name__ = f"in_stream_{code}"
    return check


def status(case, code, http_status):
    def check():
        try:
            client(case).converse_stream(modelId=MODEL, messages=MESSAGES)
        except ClientError as error:
            got = (error.response["Error"]["Code"], error.response["ResponseMetadata"]["HTTPStatusCode"])
            expect(got == (code, http_status), f"got {got}, {error.response['Error']}")
            expect(type(error).__name__ == code, f"modeled exception {type(error).__name__}")
            return
        raise AssertionError(f"no ClientError for {case}")

    check.__name__ = f"status_{http_status}_{code}"
    return check


def a_corrupted_crc_is_a_checksum_mismatch():
    seen = []
    try:
        for event in client("garbage").converse_stream(modelId=MODEL, messages=MESSAGES)["stream"]:
            seen.append(next(iter(event)))
    except ChecksumMismatch as error:
        expect(seen == ["messageStart", "contentBlockDelta"], f"events before the bad CRC {seen}: {error}")
        return
    raise AssertionError(f"no ChecksumMismatch after {seen}")


def a_reset_after_two_deltas_is_a_connection_error():
    seen = []
    try:
        for event in client("reset").converse_stream(modelId=MODEL, messages=MESSAGES)["stream"]:
            if "contentBlockDelta" in event:
                seen.append(event["contentBlockDelta"]["delta"]["text"])
    # Mid-stream, botocore does not wrap the transport's error: urllib3's own reaches the caller.
    except (botocore.exceptions.BotoCoreError, urllib3.exceptions.ProtocolError) as error:
        expect(seen == ["a", " b"], f"deltas before the reset {seen}, then {error!r}")
        return
    raise AssertionError(f"no error after {seen}")


run_cases("boto3 bedrock-runtime (python)", [
    stream_text, stream_reasoning_text_and_a_tool_use, converse_whole,
    in_stream_exception("throttled", "throttlingException", "try again in 1.5s"),
    in_stream_exception("internal", "internalServerException", "unexpected error"),
    in_stream_exception("model_stream", "modelStreamErrorException", "Retry your request"),
    in_stream_exception("unavailable", "serviceUnavailableException", "unable to process"),
    status("rate_limited", "ThrottlingException", 429), status("not_ready", "ModelNotReadyException", 429),
    status("busy", "ServiceUnavailableException", 503), status("internal_status", "InternalServerException", 500),
    status("invalid", "ValidationException", 400),
    a_corrupted_crc_is_a_checksum_mismatch, a_reset_after_two_deltas_is_a_connection_error,
])
