"""The judge as a service, over HTTP (standard library only): the cases, a run of one, and the
verdict on what the client ended with (docs/service.md)."""

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request


class SquallVerdictError(AssertionError):
    """A case failed a MUST, or could not be judged: the message names the failing checks."""


class Judge:
    """A squall server's judge."""

    def __init__(self, url):
        self.url = url.rstrip("/")
        # Session → its calibration's one-line summary, once it ran.
        self.calibrations = {}

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as reply:
                return json.load(reply)
        except urllib.error.HTTPError as error:
            detail = json.load(error).get("error", {})
            raise RuntimeError(f"squall: {method} {path}: {error.code} {detail.get('message')}") from None

    def cases(self, profile=None, level=None, tags=None):
        """The case list (schema squall.cases/1)."""
        query = [(k, v) for k, v in (("profile", profile), ("level", level), ("tags", tags)) if v]
        return self._call("GET", "/__squall/cases" + ("?" + urllib.parse.urlencode(query) if query else ""))

    def create_run(self, case_id, **body):
        """A run of `case_id`; `body` takes session, level, seed, herd, time_scale."""
        return self._call("POST", f"/__squall/cases/{case_id}/runs", {k: v for k, v in body.items() if v is not None})

    def verdict(self, run, outcome):
        """The verdict on `outcome` (result, events, ...) for `run`."""
        return self._call("POST", run["verdict"], outcome)

    def calibrate(self, calibration, session, level, seed, run_client, timeout):
        """Run the `calibration` case in `session` with `run_client`, once per session: what the
        client spends of its own per retry, which timing checks take out of every wait. Whether
        it ran now."""
        if session in self.calibrations:
            return False
        reply = {}
        for scale in calibration["time_scales"]:
            for _ in range(calibration["instances_per_scale"]):
                case = Case(self, calibration, session, level, seed, scale)
                returned = _within(timeout, run_client, case)
                if returned is _TIMED_OUT:
                    reply = case.judge_outcome(None, timed_out=True, case_timeout_s=timeout)
                    continue
                result, events = returned if isinstance(returned, tuple) else (returned, None)
                reply = case.judge_outcome(result, events)
        self.calibrations[session] = reply.get("summary", "no summary")
        return True


class Case:
    """One case as a test sees it: how to configure the client, and the verdict on what it did.

    `base_url` (OpenAI, ends in /v1), `anthropic_base_url`, `gemini_base_url`, `azure_openai_endpoint`, `ollama_host`, `bedrock_base_url`
    (boto3's `endpoint_url`), `time_scale` (multiply every wait
    and timeout of the client by it), `max_retries` (None: the client's own default),
    `agent_profile`, `prompt`, `env` (the IUT contract's variables), and `description` (the
    case as exported: id, requirements, checks)."""

    def __init__(self, judge, description, session, level, seed=None, time_scale=None, case_timeout=None,
                 calibration=None):
        self.judge = judge
        self.case_timeout = case_timeout
        self.calibration = calibration
        self.asked_time_scale = time_scale
        self.description = description
        self.id = description["id"]
        self.session, self.level, self.seed = session, level, seed
        self.run = judge.create_run(self.id, session=session, level=level, seed=seed, time_scale=time_scale)
        self.base_url = self.run["base_url"]
        self.anthropic_base_url = self.run["anthropic_base_url"]
        self.gemini_base_url = self.run.get("gemini_base_url")
        self.azure_openai_endpoint = self.run.get("azure_openai_endpoint")
        self.ollama_host = self.run.get("ollama_host")
        self.bedrock_base_url = self.run.get("bedrock_base_url")
        self.time_scale = self.run["time_scale"]
        self.env = self.run["env"]
        client = description["client"]
        self.max_retries = client["max_retries"]
        self.agent_profile = client["agent_profile"]
        self.prompt = client["prompt"]
        self.verdict = None

    def judge_outcome(self, result, events=None, **outcome):
        """Post what the client ended with (`result` is result.json's object); the verdict."""
        outcome.update(result=result, events=events)
        self.verdict = self.judge.verdict(self.run, outcome)
        return self.verdict

    def verify(self, run_client, timeout=None):
        """Run `run_client(case)` — it returns the result dict, or (result, events) — and judge
        it; when squall asks for a confirming run, run it again at the slower scale. A client
        still running after `timeout` seconds (default: 60 at 1/100, as `squall run` gives; more
        for a slower run) is judged as timed out (its thread is left behind: an SDK call cannot be
        killed). A timed case first runs the session's calibration if it has none (once per
        session). Raises SquallVerdictError on `fail` or `error`; returns the verdict."""
        case = self
        if self.calibration and self.description.get("timed"):
            limit = timeout or self.case_timeout or 60
            if self.judge.calibrate(self.calibration, self.session, self.level, self.seed, run_client, limit):
                # The run's time scale is chosen from the session's calibration: a run made before it.
                case = Case(self.judge, self.description, self.session, self.level, self.seed,
                            self.asked_time_scale, self.case_timeout)
        for _ in range(2):
            started = time.monotonic()
            limit = timeout or self.case_timeout or 60 * max(1.0, case.time_scale / 0.01)
            returned = _within(limit, run_client, case)
            if returned is _TIMED_OUT:
                verdict = case.judge_outcome(None, timed_out=True, case_timeout_s=limit)
                break
            result, events = returned if isinstance(returned, tuple) else (returned, None)
            verdict = case.judge_outcome(result, events, duration_ms=(time.monotonic() - started) * 1000)
            confirm = verdict.get("confirm")
            if not confirm:
                break
            case = Case(self.judge, self.description, self.session, self.level, self.seed, confirm["time_scale"],
                        self.case_timeout)
        self.verdict = case.verdict
        if self.verdict.get("verdict") in ("fail", "error"):
            raise SquallVerdictError(describe(self.verdict))
        return self.verdict


_TIMED_OUT = object()


def _within(seconds, function, *args):
    """`function(*args)`, or _TIMED_OUT when it has not returned after `seconds`; its exception
    is raised here."""
    outcome = {}

    def call():
        try:
            outcome["value"] = function(*args)
        except BaseException as error:  # handed to the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        return _TIMED_OUT
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def describe(verdict):
    """A verdict as an assertion message: the case, its requirements, each failing check."""
    lines = [f"{verdict.get('case')} ({', '.join(verdict.get('requirements', []))}): {verdict.get('verdict')}"]
    if verdict.get("error"):
        lines.append(f"  could not be judged: {verdict['error']}")
    for check in verdict.get("checks", []):
        if check["verdict"] in ("fail", "warn", "error"):
            lines.append(f"  [{check['strength'].upper()} {check['verdict']}] {check['name']}")
            lines.append(f"      expected: {check['expected']}")
            lines.append(f"      observed: {check['observed']}")
    return "\n".join(lines)


class scaled_time:
    """The `time` module with `sleep` multiplied by `scale`: hand it to an SDK that sleeps
    between retries through `time.sleep` (e.g. `openai._base_client.time = scaled_time(s)`),
    so its waits follow the case's time scale without changing what it decides."""

    def __init__(self, scale):
        self.scale = scale

    def __getattr__(self, name):
        return getattr(time, name)

    def sleep(self, seconds):
        time.sleep(seconds * self.scale)
