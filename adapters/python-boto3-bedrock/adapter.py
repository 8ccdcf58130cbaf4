"""AWS's `boto3` (botocore) Bedrock Runtime client, as shipped, behind squall's IUT contract.

Usage: adapter.py standard|adaptive — the retry mode (botocore's default is `standard`).

Runs one streamed Converse call (SQUALL_TASK=stream: `converse_stream`) against the run's
AWS_ENDPOINT_URL_BEDROCK_RUNTIME with the test credentials the contract gives, in the mode
named, with botocore's own attempts, backoff, retry quota and (adaptive) client-side rate
limiter, and writes $SQUALL_OUT/result.json. Nothing is patched or scaled: squall runs the process on
a sped-up clock (`--clock accelerated`, docs/iut-contract.md), so botocore's retry sleeps, its
default timeouts (60 s connect, 60 s read) and adaptive mode's token bucket keep their production
values. When a case configures
providerRetry.maxRetries (SQUALL_MAX_RETRIES), it becomes `total_max_attempts` (retries + 1).

The SDK writes no PRD-0006 event log, so this adapter declares the `wire` level: squall judges
what the SDK did on the wire. Tasks (`task`, `main`) are not something an SDK does.
"""

import importlib.metadata
import json
import os
import platform
import sys

import boto3
from botocore.config import Config

OUT = os.environ["SQUALL_OUT"]
MODE = sys.argv[1] if len(sys.argv) > 1 else "standard"


def write_result(result):
    # The SDK waits its production values: squall runs it on a sped-up clock (which tells it
    # SQUALL_TIME_SCALE=1), and refuses to judge it on a scaled one rather than misread it.
    result["time_scale"] = 1
    # What the adapter is, for the report's provenance (the IUT contract's `implementation`).
    result["implementation"] = {
        "name": f"boto3 bedrock-runtime, {MODE} retries (python)",
        "version": importlib.metadata.version("boto3"),
        "runtime": f"{platform.python_implementation()} {platform.python_version()}",
    }
    with open(os.path.join(OUT, "result.json"), "w") as f:
        json.dump(result, f)


def main():
    if os.environ.get("SQUALL_TASK") != "stream":
        write_result({"ok": False, "stop_reason": "error", "final_text": None,
                      "error_type": "NotSupported", "error_message": "the SDK has no Task runner"})
        return
    retries = {"mode": MODE}
    if os.environ.get("SQUALL_MAX_RETRIES"):
        retries["total_max_attempts"] = int(os.environ["SQUALL_MAX_RETRIES"]) + 1
    config = Config(retries=retries)
    # The endpoint, credentials and region come from the contract's AWS_* variables.
    client = boto3.client("bedrock-runtime", config=config)
    text = []
    try:
        reply = client.converse_stream(modelId="anthropic.claude-3-5-haiku-20241022-v1:0",
                                       messages=[{"role": "user", "content": [{"text": os.environ.get("SQUALL_PROMPT", "hi")}]}])
        for event in reply["stream"]:
            delta = event.get("contentBlockDelta", {}).get("delta", {})
            if "text" in delta:
                text.append(delta["text"])
    except Exception as error:  # what a caller of the SDK sees
        write_result({"ok": False, "stop_reason": "error", "final_text": None,
                      "error_type": type(error).__name__, "error_message": str(error)})
        return
    write_result({"ok": True, "stop_reason": "end_turn", "final_text": "".join(text),
                  "error_type": None, "error_message": None})


if __name__ == "__main__":
    main()
