"""The IUT contract (docs/iut-contract.md): read the case from the environment, run it, write
$SQUALL_OUT/result.json and $SQUALL_OUT/events.jsonl."""

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import agent  # noqa: E402
from retry import Events, Policy, call_with_retries, error_type  # noqa: E402
from wire import ProviderError, post_stream  # noqa: E402


def env(name, default=None):
    value = os.environ.get(name, "")
    return value if value else default


def main():
    out = env("SQUALL_OUT")
    scale = float(env("SQUALL_TIME_SCALE", "1"))
    max_retries = env("SQUALL_MAX_RETRIES")
    seed = env("SQUALL_SEED")
    profile = env("SQUALL_PROFILE", "default")

    def policy():
        return Policy(profile, int(max_retries) if max_retries else None, int(seed) if seed else None)

    task = env("SQUALL_TASK", "stream")
    if task == "stream":
        result = stream(out, scale, policy())
    else:
        ctx = agent.Context(env("OPENAI_BASE_URL"), env("OPENAI_API_KEY", "test"), policy, scale, os.path.join(out, "workspace"))
        result = run_task(ctx, out) if task == "task" else run_main(ctx, out)
    result["time_scale"] = scale
    with open(os.path.join(out, "result.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False)


def stream(out, scale, policy):
    events = Events(os.path.join(out, "events.jsonl"))
    body = {"model": "gpt-prd0006", "input": env("SQUALL_PROMPT", "hello"), "stream": True}
    headers = {"x-session-id": "prd0006-" + env("SQUALL_CASE", "case").split("#")[-1]}
    base_url, key = env("OPENAI_BASE_URL"), env("OPENAI_API_KEY", "test")
    try:
        reply = call_with_retries(lambda timeout: post_stream(base_url, key, body, headers, timeout), policy, scale, events)
    except ProviderError as error:
        fallback = env("SQUALL_FALLBACK")
        if fallback:
            events.emit({"type": "result", "stop_reason": "degraded", "final_text": fallback})
            return {"ok": True, "stop_reason": "degraded", "final_text": fallback, "error_type": error_type(error),
                    "error_message": str(error)}
        events.emit({"type": "result", "stop_reason": "error"})
        return {"ok": False, "stop_reason": "error", "final_text": None, "error_type": error_type(error), "error_message": str(error)}
    finally:
        events.close()
    events = Events(os.path.join(out, "events.jsonl"))
    events.emit({"type": "result", "stop_reason": "end_turn", "final_text": reply.text})
    events.close()
    return {"ok": True, "stop_reason": "end_turn", "final_text": reply.text, "error_type": None, "error_message": None}


def run_task(ctx, out):
    result = agent.deep_research(ctx, "task-dr1", env("SQUALL_PROMPT", "research"))
    shutil.copyfile(result["events_path"], os.path.join(out, "events.jsonl"))
    return {"ok": result["ok"], "stop_reason": result["stop_reason"], "final_text": result.get("summary"),
            "error_type": result.get("error_type"), "error_message": result.get("error_message"),
            "sub_session_id": result["sub_session_id"], "events_path": result["events_path"], "report_path": result["report_path"]}


def run_main(ctx, out):
    session = agent.Session(ctx, "main")
    tools = agent.TaskTool(ctx)
    try:
        text = session.turn(agent.MAIN_RULES, env("SQUALL_PROMPT", "hello"), tools, shows_output=True)
        result = {"ok": True, "stop_reason": "end_turn", "final_text": text, "error_type": None, "error_message": None}
    except agent.TurnFailed as failure:
        result = {"ok": False, "stop_reason": "error", "final_text": None, "error_type": failure.error_type, "error_message": str(failure)}
    finally:
        session.events.close()
    shutil.copyfile(session.events_path, os.path.join(out, "events.jsonl"))
    result["task_results"] = tools.results
    return result


if __name__ == "__main__":
    main()
