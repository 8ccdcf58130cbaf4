"""Drive the official `google-genai` Python SDK against squall's Gemini API and check it parses
every reply into its own typed objects.

Usage: python parse_gemini.py  (reads SQUALL_RUNS: a JSON object of case name -> the run's
Gemini base URL, without /v1). Exits non-zero with the failing case named on stderr.
"""

import json
import os

from google import genai
from google.genai import errors, types

from checker_kit import expect, run_cases

RUNS = json.loads(os.environ["SQUALL_RUNS"])
MODEL = "gemini-2.5-flash"


CLIENTS = []


def client(case, attempts=None, api_version=None):
    retry = types.HttpRetryOptions(attempts=attempts, initial_delay=0.1, max_delay=5) if attempts else None
    options = types.HttpOptions(base_url=RUNS[case], api_version=api_version, retry_options=retry, timeout=10_000)
    made = genai.Client(api_key="squall-gemini-test", http_options=options)
    # A google-genai 3 client closes its connections once it is collected: keep each one.
    CLIENTS.append(made)
    return made


def streamed_text_is_typed():
    chunks = list(client("text").models.generate_content_stream(model=MODEL, contents="hi"))
    expect(all(isinstance(c, types.GenerateContentResponse) for c in chunks), "typed chunks")
    text = "".join(c.text or "" for c in chunks)
    expect(text == "The quick brown fox", f"text {text!r}")
    expect(chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP, "the last chunk finishes")
    expect(chunks[-1].usage_metadata.total_token_count > 0, "usage is parsed")


def whole_response_on_both_api_versions():
    for version in (None, "v1beta"):
        response = client("text", api_version=version).models.generate_content(model=MODEL, contents="hi")
        expect(response.text == "The quick brown fox", f"{version}: text {response.text!r}")


def thoughts_text_and_function_call():
    chunks = list(client("rich").models.generate_content_stream(model=MODEL, contents="hi"))
    parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])]
    thoughts = "".join(p.text for p in parts if p.thought)
    text = "".join(p.text for p in parts if p.text and not p.thought)
    calls = [p.function_call for p in parts if p.function_call]
    expect(thoughts == "The user wants research.", f"thoughts {thoughts!r}")
    expect(text == "Let me delegate.", f"text {text!r}")
    expect(len(calls) == 1 and calls[0].name == "Task", f"calls {calls}")
    expect(calls[0].args == {"agent": "deep-research", "prompt": "x"}, f"args {calls[0].args}")


def error_chunk_in_stream():
    seen = []
    try:
        for chunk in client("failed").models.generate_content_stream(model=MODEL, contents="hi"):
            seen.append(chunk.text)
    except errors.ClientError as error:
        expect(error.code == 429 and error.status == "RESOURCE_EXHAUSTED", f"{error.code} {error.status}")
        expect("1.5s" in error.message, f"message {error.message!r}")
        expect(seen == ["part"], f"chunks before the error {seen}")
        return
    raise AssertionError("an error chunk must raise")


def overloaded_in_stream():
    try:
        list(client("overloaded").models.generate_content_stream(model=MODEL, contents="hi"))
    except errors.ServerError as error:
        expect(error.code == 503 and error.status == "UNAVAILABLE", f"{error.code} {error.status}")
        return
    raise AssertionError("an overloaded error chunk must raise ServerError")


def rate_limited_status_with_retry_info():
    try:
        client("rate_limited").models.generate_content(model=MODEL, contents="hi")
    except errors.ClientError as error:
        expect(error.code == 429 and error.status == "RESOURCE_EXHAUSTED", f"{error.code} {error.status}")
        details = error.details["error"]["details"]
        expect(details == [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}], f"{details}")
        return
    raise AssertionError("a 429 must raise ClientError")


def retried_with_its_retry_options():
    # The SDK retries only when given retry options; squall answers 503, then text.
    response = client("retried", attempts=3).models.generate_content(model=MODEL, contents="hi")
    expect(response.text == "The quick brown fox", f"text {response.text!r}")


def reset_mid_stream():
    seen = []
    try:
        for chunk in client("reset").models.generate_content_stream(model=MODEL, contents="hi"):
            seen.append(chunk.text)
    except Exception as error:  # noqa: BLE001 - the SDK lets httpx's transport error through
        expect(not isinstance(error, AssertionError), repr(error))
        expect(seen == ["a", " b"], f"chunks before the reset {seen}: {error!r}")
        return
    raise AssertionError("a reset stream must raise")


CASES = [
    streamed_text_is_typed,
    whole_response_on_both_api_versions,
    thoughts_text_and_function_call,
    error_chunk_in_stream,
    overloaded_in_stream,
    rate_limited_status_with_retry_info,
    retried_with_its_retry_options,
    reset_mid_stream,
]

run_cases(f"google-genai {genai.__version__}", CASES)
