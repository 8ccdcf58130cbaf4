"""Drive the official `openai` Python SDK's `AzureOpenAI` client against squall, each run's URL
as the Azure endpoint, and check it parses every reply (a content-filter refusal in Azure's
shape among them) and retries as it would against Azure.

Usage: python parse_azure.py  (reads SQUALL_RUNS: a JSON object of case name -> Azure endpoint)
"""

import json
import os

import openai
from openai import AzureOpenAI
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseCompletedEvent, ResponseTextDeltaEvent

from checker_kit import expect, run_cases

RUNS = json.loads(os.environ["SQUALL_RUNS"])


def client(case, retries=0):
    return AzureOpenAI(azure_endpoint=RUNS[case], api_key="squall-azure-test", api_version="2024-10-21",
                       max_retries=retries, timeout=10)


def chat_stream_text():
    chunks = list(client("text").chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=True))
    expect(all(isinstance(c, ChatCompletionChunk) for c in chunks), "every chunk typed")
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    expect(text == "The quick brown fox", f"text {text!r}")


def responses_stream_text():
    events = list(client("responses").responses.create(model="gpt-4o", input="hi", stream=True))
    text = "".join(e.delta for e in events if isinstance(e, ResponseTextDeltaEvent))
    expect(text == "The quick brown fox", f"text {text!r}")
    expect(isinstance(events[-1], ResponseCompletedEvent), f"last event is {type(events[-1]).__name__}")


def rate_limited_is_a_rate_limit_error():
    try:
        client("rate_limited").chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    except openai.RateLimitError as error:
        expect(error.status_code == 429, f"status {error.status_code}")
        expect(error.response.headers.get("retry-after-ms") == "1500", f"headers {dict(error.response.headers)}")
        return
    raise AssertionError("no RateLimitError")


def retried_after_a_503():
    completion = client("retried", retries=2).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    expect(completion.choices[0].message.content == "The quick brown fox", f"{completion}")


def a_filtered_prompt_is_a_bad_request_with_azures_inner_error():
    try:
        client("filtered").chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    except openai.BadRequestError as error:
        expect(error.code == "content_filter" and error.param == "prompt", f"code {error.code}, param {error.param}")
        expect(error.body["innererror"]["code"] == "ResponsibleAIPolicyViolation", f"body {error.body}")
        return
    raise AssertionError("no BadRequestError")


run_cases("AzureOpenAI", [chat_stream_text, responses_stream_text, rate_limited_is_a_rate_limit_error,
                          retried_after_a_503, a_filtered_prompt_is_a_bad_request_with_azures_inner_error])
