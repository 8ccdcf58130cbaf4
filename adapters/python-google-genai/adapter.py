"""Google's `google-genai` Python SDK, with its default retry options, behind squall's IUT contract.

Runs one streamed Gemini call (SQUALL_TASK=stream: `client.models.generate_content_stream`)
against the run's GOOGLE_GEMINI_BASE_URL with `HttpRetryOptions()` — the SDK's retry defaults
(5 attempts, 1 s doubling to 60 s plus up to 1 s of jitter, statuses 408/429/500/502/503/504,
httpx timeouts and connection errors); without retry options the SDK makes one attempt only —
and writes $SQUALL_OUT/result.json. Nothing is patched or scaled: squall runs the process
on a sped-up clock (`--clock accelerated`, docs/iut-contract.md). When a case configures providerRetry.maxRetries (SQUALL_MAX_RETRIES), it becomes the retry
options' `attempts` (retries + 1).

The SDK writes no PRD-0006 event log, so this adapter declares the `wire` level: squall
judges what the SDK did on the wire. Tasks (`task`, `main`) are not something an SDK does.
"""

import importlib.metadata
import json
import os
import platform

from google import genai
from google.genai import types

OUT = os.environ["SQUALL_OUT"]


def write_result(result):
    # The SDK waits its production values: squall runs it on a sped-up clock (which tells it
    # SQUALL_TIME_SCALE=1), and refuses to judge it on a scaled one rather than misread it.
    result["time_scale"] = 1
    # What the adapter is, for the report's provenance (the IUT contract's `implementation`).
    result["implementation"] = {
        "name": "google-genai (python)",
        "version": importlib.metadata.version("google-genai"),
        "runtime": f"{platform.python_implementation()} {platform.python_version()}",
    }
    with open(os.path.join(OUT, "result.json"), "w") as f:
        json.dump(result, f)


def main():
    if os.environ.get("SQUALL_TASK") != "stream":
        write_result({"ok": False, "stop_reason": "error", "final_text": None,
                      "error_type": "NotSupported", "error_message": "the SDK has no Task runner"})
        return
    # providerRetry.maxRetries, when the case configures it: the retry options' attempts.
    retries = os.environ.get("SQUALL_MAX_RETRIES")
    retry = types.HttpRetryOptions(attempts=int(retries) + 1) if retries else types.HttpRetryOptions()
    client = genai.Client(api_key=os.environ.get("GEMINI_API_KEY", "test"),
                          http_options=types.HttpOptions(base_url=os.environ["GOOGLE_GEMINI_BASE_URL"],
                                                         retry_options=retry))
    text = []
    try:
        prompt = os.environ.get("SQUALL_PROMPT", "hi")
        for chunk in client.models.generate_content_stream(model="gemini-2.5-flash", contents=prompt):
            for part in (chunk.candidates[0].content.parts or []) if chunk.candidates and chunk.candidates[0].content else []:
                if part.text and not part.thought:
                    text.append(part.text)
    except Exception as error:  # what a caller of the SDK sees
        write_result({"ok": False, "stop_reason": "error", "final_text": None,
                      "error_type": type(error).__name__, "error_message": str(error)})
        return
    write_result({"ok": True, "stop_reason": "end_turn", "final_text": "".join(text),
                  "error_type": None, "error_message": None})


if __name__ == "__main__":
    main()
