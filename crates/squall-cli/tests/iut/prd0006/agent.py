"""Sessions and tasks: a turn loop over the retrying provider, the deep-research sub-session
that always delivers a report (REQ-0006-020/021), the Task tool with its storm guard
(REQ-0006-030), and the tool-output budget (PRD-0003 REQ-0003-001).
"""

import json
import os

import bugs
from retry import Events, call_with_retries, error_type
from wire import ProviderError, post_stream

MAIN_RULES = (
    "You are the main session. Delegate research with the Task tool (agent \"deep-research\"). "
    "When Task(deep-research) returns ok=false or stop_reason=\"error\", do not start it again: "
    "tell the user it failed, point to the report, and suggest they retry."
)
RESEARCH_RULES = "You are a deep-research sub-agent. Search, read, then write your findings."
BUDGET_BYTES = 8 * 1024
MAX_MODEL_CALLS = 8

FIXTURE_SOURCES = [
    {"url": "https://fixtures.prd0006.invalid/backoff", "title": "Exponential backoff", "text": "Double the wait, cap it, add jitter."},
    {"url": "https://fixtures.prd0006.invalid/retry-after", "title": "Retry-After", "text": "Seconds or an HTTP-date."},
]
HUGE_QUERY = "squall:huge-output"


class TurnFailed(Exception):
    def __init__(self, error_type_name, message):
        super().__init__(message)
        self.error_type = error_type_name


def cut(text):
    """Keep the head and the tail of a long string, with a marker for what was cut."""
    if len(text.encode()) <= BUDGET_BYTES:
        return text
    half = BUDGET_BYTES // 2
    omitted = len(text) - 2 * half
    if bugs.on("head-only-budget"):
        return text[:BUDGET_BYTES] + f"\n[{omitted + half} characters cut]"
    return f"{text[:half]}\n[... {omitted} characters cut by the tool-output budget ...]\n{text[-half:]}"


def budget(value):
    """Apply `cut` to every string inside a tool result."""
    if isinstance(value, str):
        return cut(value)
    if isinstance(value, list):
        return [budget(v) for v in value]
    if isinstance(value, dict):
        return {k: budget(v) for k, v in value.items()}
    return value


class Context:
    """What every session of a case shares."""

    def __init__(self, base_url, api_key, policy_factory, scale, workspace):
        self.base_url = base_url
        self.api_key = api_key
        self.policy_factory = policy_factory
        self.scale = scale
        self.workspace = workspace


class Session:
    def __init__(self, ctx, session_id):
        self.ctx = ctx
        self.id = session_id
        self.dir = os.path.join(ctx.workspace, ".agents", "sessions", session_id)
        os.makedirs(self.dir, exist_ok=True)
        self.events_path = os.path.join(self.dir, "events.jsonl")
        self.events = Events(self.events_path)

    def turn(self, instructions, prompt, tools, shows_output):
        """Run model calls and tools until the model answers in text or a tool ends the turn.
        Returns the answer; raises TurnFailed."""
        conversation = [{"role": "user", "content": prompt}]
        policy = self.ctx.policy_factory()
        for _ in range(MAX_MODEL_CALLS):
            body = {"model": "gpt-prd0006", "instructions": instructions, "input": conversation, "stream": True,
                    "tools": tools.specs()}
            try:
                reply = call_with_retries(
                    lambda timeout: post_stream(self.ctx.base_url, self.ctx.api_key, body, {"x-session-id": self.id}, timeout),
                    policy, self.ctx.scale, self.events, shows_output)
            except ProviderError as error:
                raise TurnFailed(error_type(error), str(error)) from error
            if not reply.tool_calls:
                self.events.emit({"type": "result", "stop_reason": "end_turn", "final_text": reply.text})
                return reply.text
            for call in reply.tool_calls:
                output, final_words = tools.call(call["name"], call.get("arguments") or "{}")
                self.events.emit({"type": "tool.result", "name": call["name"], "output": output})
                conversation.append({"type": "function_call", "call_id": call["call_id"], "name": call["name"], "arguments": call.get("arguments") or "{}"})
                conversation.append({"type": "function_call_output", "call_id": call["call_id"], "output": output})
                if final_words is not None:
                    self.events.emit({"type": "result", "stop_reason": "end_turn", "final_text": final_words})
                    return final_words
        raise TurnFailed("TurnLimitException", f"no answer after {MAX_MODEL_CALLS} model calls")


class ResearchTools:
    def __init__(self):
        self.collected = []

    def specs(self):
        return [{"type": "function", "name": "web_search", "description": "Search the web.",
                 "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}},
                {"type": "function", "name": "web_fetch", "description": "Read a page.",
                 "parameters": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}}]

    def call(self, name, arguments):
        args = json.loads(arguments or "{}")
        if name == "web_search":
            if HUGE_QUERY in args.get("query", ""):
                results = [{"url": "https://fixtures.prd0006.invalid/huge", "text": "BEGIN " + "retry " * (1024 * 1024 // 6) + " END"}]
            else:
                results = FIXTURE_SOURCES
            self.collected.extend(r["url"] for r in results if r["url"] not in self.collected)
            return json.dumps(budget(results), ensure_ascii=False), None
        if name == "web_fetch":
            page = next((s for s in FIXTURE_SOURCES if s["url"] == args.get("url")), None)
            return json.dumps(budget(page or {"error": "not found"}), ensure_ascii=False), None
        return json.dumps({"error": f"no tool {name}"}), None


def deep_research(ctx, sub_id, prompt):
    """One deep-research sub-session; always writes a report and returns the Task result."""
    session = Session(ctx, sub_id)
    tools = ResearchTools()
    report_path = os.path.join(session.dir, "report.md")
    try:
        findings = session.turn(RESEARCH_RULES, prompt, tools, shows_output=False)
        if not findings.strip():
            raise TurnFailed("EmptyFindingsException", "the sub-session answered with no text")
    except TurnFailed as failure:
        sources = "\n".join(f"- {url}" for url in tools.collected) or "- (no source was collected)"
        write(report_path, f"# Deep research failed\n\n## 失败原因\n\n{failure.error_type}: {failure}\n\n"
                           f"## 已收集来源\n\n{sources}\n\n## 续跑建议\n\nRetry the task with the same prompt once the provider "
                           f"recovers; the sources above need not be searched again. Events: {session.events_path}\n")
        return {"ok": False, "stop_reason": "error", "error_type": failure.error_type, "error_message": str(failure),
                "sub_session_id": sub_id, "events_path": session.events_path, "report_path": report_path}
    finally:
        session.events.close()
    sources = "\n".join(f"- {url}" for url in tools.collected) or "- (none)"
    write(report_path, f"# Deep research\n\n## 执行摘要\n\n{findings.strip()[:400]}\n\n## 关键发现\n\n- {findings.strip()[:200]}\n\n"
                       f"## 详细分析\n\n{findings.strip()}\n\n## 参考来源\n\n{sources}\n")
    return {"ok": True, "stop_reason": "end_turn", "summary": findings.strip()[:1000], "sub_session_id": sub_id,
            "events_path": session.events_path, "report_path": report_path}


class TaskTool:
    """The main session's Task tool; after a failed deep research it refuses to start another
    and ends the turn with a word to the user."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.launched = 0
        self.failure = None
        self.results = []

    def specs(self):
        return [{"type": "function", "name": "Task", "description": "Run a sub-agent in its own sub-session.",
                 "parameters": {"type": "object", "properties": {"agent": {"type": "string"}, "prompt": {"type": "string"}},
                                "required": ["agent", "prompt"]}}]

    def call(self, name, arguments):
        args = json.loads(arguments or "{}")
        if name != "Task" or args.get("agent") != "deep-research":
            return json.dumps({"ok": False, "stop_reason": "error", "error_type": "UnknownAgent", "error_message": "only deep-research"}), None
        if self.failure is not None:
            words = "" if bugs.on("silent-turn-end") else (
                f"Deep research failed ({self.failure['error_type']}: {self.failure['error_message']}). I am not restarting it on my own; "
                f"the report is at {self.failure['report_path']}. Ask me to retry when you want another attempt.")
            refusal = {"ok": False, "stop_reason": "error", "error_type": "RelaunchRefused", "error_message": "deep research already failed"}
            return json.dumps(refusal), words
        result = self.launch(args.get("prompt", ""))
        if not result["ok"] and bugs.on("relaunch-inside-task"):
            result = self.launch(args.get("prompt", ""))
        if not result["ok"]:
            self.failure = result
        self.results.append(result)
        told = dict(result, ok=True) if bugs.on("task-ok-to-model") else result
        return json.dumps(told, ensure_ascii=False), None

    def launch(self, prompt):
        self.launched += 1
        return deep_research(self.ctx, f"main-dr{self.launched}", prompt)


def write(path, text):
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(temporary, path)
