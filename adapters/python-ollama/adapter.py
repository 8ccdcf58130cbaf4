"""The official `ollama` Python client, as shipped, behind squall's IUT contract.

Runs one streamed chat (SQUALL_TASK=stream: `Client().chat(..., stream=True)`) against the run's
OLLAMA_HOST with the client's defaults and writes $SQUALL_OUT/result.json. Nothing is patched
or scaled: the client makes no wait of its own (no retries, no timeout). SQUALL_MAX_RETRIES has nothing to
configure: the client has no retry setting.

The client writes no PRD-0006 event log, so this adapter declares the `wire` level: squall
judges what it did on the wire. Tasks (`task`, `main`) are not something a client does.
"""

import importlib.metadata
import json
import os
import platform

from ollama import Client

OUT = os.environ["SQUALL_OUT"]


def write_result(result):
    # The client waits its production values: squall runs it on a sped-up clock (which tells it
    # SQUALL_TIME_SCALE=1), and refuses to judge it on a scaled one rather than misread it.
    result["time_scale"] = 1
    # What the adapter is, for the report's provenance (the IUT contract's `implementation`).
    result["implementation"] = {
        "name": "ollama (python)",
        "version": importlib.metadata.version("ollama"),
        "runtime": f"{platform.python_implementation()} {platform.python_version()}",
    }
    with open(os.path.join(OUT, "result.json"), "w") as f:
        json.dump(result, f)


def main():
    if os.environ.get("SQUALL_TASK") != "stream":
        write_result({"ok": False, "stop_reason": "error", "final_text": None,
                      "error_type": "NotSupported", "error_message": "the client has no Task runner"})
        return
    # The host comes from the contract's OLLAMA_HOST, which the client reads itself.
    client = Client()
    text = []
    try:
        messages = [{"role": "user", "content": os.environ.get("SQUALL_PROMPT", "hi")}]
        for part in client.chat(model="llama3.2", messages=messages, stream=True):
            text.append(part.message.content or "")
    except Exception as error:  # what a caller of the client sees
        write_result({"ok": False, "stop_reason": "error", "final_text": None,
                      "error_type": type(error).__name__, "error_message": str(error)})
        return
    write_result({"ok": True, "stop_reason": "end_turn", "final_text": "".join(text),
                  "error_type": None, "error_message": None})


if __name__ == "__main__":
    main()
