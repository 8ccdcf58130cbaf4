"""The official `anthropic` Python SDK, as shipped, behind squall's IUT contract.

Runs one streamed Messages call (SQUALL_TASK=stream) with the SDK's own retry settings
(max_retries=2, its own backoff, statuses and Retry-After handling) against the run's
ANTHROPIC_BASE_URL, and writes $SQUALL_OUT/result.json. Nothing is patched or scaled: squall
runs the process on a sped-up clock (`--clock accelerated`, docs/iut-contract.md), so the SDK's
own timeouts and waits keep their production values. When a case configures providerRetry.maxRetries (SQUALL_MAX_RETRIES), it becomes the SDK's own
max_retries.

The SDK writes no PRD-0006 event log, so this adapter declares the `wire` level: squall
judges what the SDK did on the wire. Tasks (`task`, `main`) are not something an SDK does.
"""

import importlib.metadata
import json
import os
import platform

from anthropic import Anthropic

OUT = os.environ["SQUALL_OUT"]


def write_result(result):
    # The SDK waits its production values: squall runs it on a sped-up clock (which tells it
    # SQUALL_TIME_SCALE=1), and refuses to judge it on a scaled one rather than misread it.
    result["time_scale"] = 1
    # What the adapter is, for the report's provenance (the IUT contract's `implementation`).
    result["implementation"] = {
        "name": "anthropic (python)",
        "version": importlib.metadata.version("anthropic"),
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
    client = Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], api_key=os.environ.get("ANTHROPIC_API_KEY", "test"), **retries)
    text = []
    try:
        prompt = os.environ.get("SQUALL_PROMPT", "hi")
        stream = client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, stream=True,
                                        messages=[{"role": "user", "content": prompt}])
        for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                text.append(event.delta.text)
    except Exception as error:  # what a caller of the SDK sees
        write_result({"ok": False, "stop_reason": "error", "final_text": None,
                      "error_type": type(error).__name__, "error_message": str(error)})
        return
    write_result({"ok": True, "stop_reason": "end_turn", "final_text": "".join(text),
                  "error_type": None, "error_message": None})


if __name__ == "__main__":
    main()
