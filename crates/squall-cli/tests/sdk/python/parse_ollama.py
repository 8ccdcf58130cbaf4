"""Drive the official `ollama` Python client against squall, each run's URL as the Ollama host,
and check it parses every reply: chat and generate, streamed (newline-delimited JSON) and
whole, thinking, tool calls, an error line in a stream, and an error status.

Usage: python parse_ollama.py  (reads SQUALL_RUNS: a JSON object of case name -> host)
"""

import json
import os

import ollama
from ollama import ChatResponse, Client, GenerateResponse

from checker_kit import expect, run_cases

RUNS = json.loads(os.environ["SQUALL_RUNS"])
MESSAGES = [{"role": "user", "content": "hi"}]


def client(case):
    return Client(host=RUNS[case], timeout=10)


def chat_stream_text():
    parts = list(client("text").chat(model="llama3", messages=MESSAGES, stream=True))
    expect(all(isinstance(p, ChatResponse) for p in parts), "every line typed")
    text = "".join(p.message.content or "" for p in parts)
    expect(text == "The quick brown fox", f"text {text!r}")
    expect(parts[-1].done and parts[-1].done_reason == "stop", f"last {parts[-1]}")
    expect(parts[-1].eval_count and parts[-1].eval_count > 0, "counts parsed")


def chat_whole_with_thinking_and_a_tool_call():
    reply = client("rich").chat(model="llama3", messages=MESSAGES, stream=False)
    expect(reply.message.thinking == "The user wants research.", f"thinking {reply.message.thinking!r}")
    expect(reply.message.content == "Let me delegate.", f"content {reply.message.content!r}")
    call = reply.message.tool_calls[0].function
    expect(call.name == "Task" and call.arguments == {"agent": "deep-research", "prompt": "x"}, f"{call}")


def generate_stream_text():
    parts = list(client("text").generate(model="llama3", prompt="hi", stream=True))
    expect(all(isinstance(p, GenerateResponse) for p in parts), "every line typed")
    expect("".join(p.response for p in parts) == "The quick brown fox", f"{parts}")
    expect(parts[-1].done, "the last line is done")


def an_error_line_ends_the_stream_with_a_response_error():
    try:
        for _ in client("failed").chat(model="llama3", messages=MESSAGES, stream=True):
            pass
    except ollama.ResponseError as error:
        expect("try again" in error.error, f"error {error.error!r}")
        return
    raise AssertionError("no ResponseError")


def a_status_is_a_response_error():
    try:
        client("busy").chat(model="llama3", messages=MESSAGES, stream=False)
    except ollama.ResponseError as error:
        expect(error.status_code == 503, f"status {error.status_code}")
        expect(error.error.startswith("server busy"), f"error {error.error!r}")
        return
    raise AssertionError("no ResponseError")


def a_reset_after_two_chunks_is_a_connection_error():
    seen = []
    try:
        for part in client("reset").chat(model="llama3", messages=MESSAGES, stream=True):
            seen.append(part.message.content)
    except Exception as error:  # httpx's, through the client
        expect(seen == ["a", " b"], f"chunks before the reset {seen}, then {error!r}")
        return
    raise AssertionError(f"no error after {seen}")


run_cases("ollama (python)", [chat_stream_text, chat_whole_with_thinking_and_a_tool_call, generate_stream_text,
                              an_error_line_ends_the_stream_with_a_response_error, a_status_is_a_response_error,
                              a_reset_after_two_chunks_is_a_connection_error])
