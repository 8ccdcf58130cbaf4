"""litellm, as shipped, behind squall's IUT contract.

Streams one `litellm.completion` (SQUALL_TASK=stream) to an OpenAI-compatible base URL
(`openai/gpt-4o-mini` with `api_base`: the Chat Completions API) with litellm's own retry
settings — it hands the request to the official openai SDK with `max_retries` 2
(litellm/constants.py DEFAULT_MAX_RETRIES) and a 600 s timeout — and writes
$SQUALL_OUT/result.json. Nothing is patched or scaled: squall runs the process on a sped-up
clock (`--clock accelerated`, docs/iut-contract.md). A case's SQUALL_MAX_RETRIES becomes
litellm's `num_retries`. litellm writes no PRD-0006 event log: this adapter declares `wire`.
"""

import importlib.metadata
import json
import os
import platform

# litellm fetches a model price list from the internet when imported; the copy it ships will do
# (and a test talks to loopback only).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402

# What litellm's first call loads, and what the call would load anyway: imported up front, a
# warm start (`squall run --warm`) loads it once for every case instead of once in each.
import httpcore  # noqa: E402,F401  (httpx's transport, the openai SDK's first request)
import litellm.proxy._types  # noqa: E402,F401  (litellm's logging of a call)

if __name__ == "__squall_warm__":
    # Run only in the warm process the cases fork from: the tokenizer litellm prices every
    # response with (tiktoken's, about 0.4 s of CPU a process), loaded once. Cold, the first
    # call loads it as it always does.
    litellm.token_counter(model="gpt-4o-mini", text="warm")

OUT = os.environ["SQUALL_OUT"]


def write_result(result):
    # litellm waits its production values: squall runs it on a sped-up clock (which tells it
    # SQUALL_TIME_SCALE=1), and refuses to judge it on a scaled one rather than misread it.
    result["time_scale"] = 1
    # What the adapter is, for the report's provenance (the IUT contract's `implementation`).
    result["implementation"] = {
        "name": "litellm (python)",
        "version": importlib.metadata.version("litellm"),
        "runtime": f"{platform.python_implementation()} {platform.python_version()}",
    }
    with open(os.path.join(OUT, "result.json"), "w") as f:
        json.dump(result, f)


def main():
    if os.environ.get("SQUALL_TASK") != "stream":
        write_result({"ok": False, "stop_reason": "error", "final_text": None,
                      "error_type": "NotSupported", "error_message": "litellm has no Task runner"})
        return
    retries = {"num_retries": int(os.environ["SQUALL_MAX_RETRIES"])} if os.environ.get("SQUALL_MAX_RETRIES") else {}
    text = []
    try:
        stream = litellm.completion(
            model="openai/gpt-4o-mini",
            api_base=os.environ["OPENAI_BASE_URL"],
            api_key=os.environ.get("OPENAI_API_KEY", "test"),
            messages=[{"role": "user", "content": os.environ.get("SQUALL_PROMPT", "hi")}],
            stream=True,
            **retries,
        )
        for chunk in stream:
            delta = chunk.choices[0].delta.content if chunk.choices else None
            if delta:
                text.append(delta)
    except Exception as error:  # what a caller of litellm sees
        write_result({"ok": False, "stop_reason": "error", "final_text": None,
                      "error_type": type(error).__name__, "error_message": str(error)})
        return
    write_result({"ok": True, "stop_reason": "end_turn", "final_text": "".join(text),
                  "error_type": None, "error_message": None})


if __name__ == "__main__":
    main()
