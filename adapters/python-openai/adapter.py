"""The official `openai` Python SDK, as shipped, behind squall's IUT contract.

Usage: adapter.py [--azure]

Runs one streamed Responses call (SQUALL_TASK=stream) — with `--azure`, one streamed Chat
Completions call through the SDK's `AzureOpenAI` client, at the contract's
AZURE_OPENAI_ENDPOINT with its key and API version — with the SDK's own retry settings
(max_retries=2, its own backoff, statuses, Retry-After handling and timeouts) and writes
$SQUALL_OUT/result.json. Nothing is patched or scaled: squall runs the process on a sped-up
clock (`--clock accelerated`, docs/iut-contract.md). When a case configures
providerRetry.maxRetries (SQUALL_MAX_RETRIES), it becomes the SDK's own max_retries.

The SDK writes no PRD-0006 event log, so this adapter declares the `wire` level: squall
judges what the SDK did on the wire. Tasks (`task`, `main`) are not something an SDK does.
"""

import importlib.metadata
import json
import os
import platform
import sys

from openai import AzureOpenAI, OpenAI

AZURE = "--azure" in sys.argv[1:]
OUT = os.environ["SQUALL_OUT"]


def write_result(result):
    # The SDK waits its production values: squall runs it on a sped-up clock (which tells it
    # SQUALL_TIME_SCALE=1), and refuses to judge it on a scaled one rather than misread it.
    result["time_scale"] = 1
    # What the adapter is, for the report's provenance (the IUT contract's `implementation`).
    result["implementation"] = {
        "name": "openai (python), AzureOpenAI" if AZURE else "openai (python)",
        "version": importlib.metadata.version("openai"),
        "runtime": f"{platform.python_implementation()} {platform.python_version()}",
    }
    with open(os.path.join(OUT, "result.json"), "w") as f:
        json.dump(result, f)


def main():
    if os.environ.get("SQUALL_TASK") != "stream":
        write_result({"ok": False, "stop_reason": "error", "final_text": None,
                      "error_type": "NotSupported", "error_message": "the SDK has no Task runner"})
        return
    # providerRetry.maxRetries, when the case configures it: the SDK's own setting.
    retries = {"max_retries": int(os.environ["SQUALL_MAX_RETRIES"])} if os.environ.get("SQUALL_MAX_RETRIES") else {}
    text = []
    try:
        prompt = os.environ.get("SQUALL_PROMPT", "hi")
        if AZURE:
            # The endpoint, key and API version come from the contract's AZURE_OPENAI_* and
            # OPENAI_API_VERSION, which the client reads itself; the model names the deployment.
            client = AzureOpenAI(**retries)
            stream = client.chat.completions.create(model="gpt-4o-mini", stream=True,
                                                    messages=[{"role": "user", "content": prompt}])
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    text.append(chunk.choices[0].delta.content)
        else:
            client = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ.get("OPENAI_API_KEY", "test"), **retries)
            for event in client.responses.create(model="gpt-4o-mini", input=prompt, stream=True):
                if event.type == "response.output_text.delta":
                    text.append(event.delta)
    except Exception as error:  # what a caller of the SDK sees
        write_result({"ok": False, "stop_reason": "error", "final_text": None,
                      "error_type": type(error).__name__, "error_message": str(error)})
        return
    write_result({"ok": True, "stop_reason": "end_turn", "final_text": "".join(text),
                  "error_type": None, "error_message": None})


if __name__ == "__main__":
    main()
