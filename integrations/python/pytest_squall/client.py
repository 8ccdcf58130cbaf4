"""The judge as a service, over HTTP (standard library only): the cases, a run of one, and the
verdict on what the client ended with (docs/service.md). On squall's clock (`clock.py`) a case's
client runs at the case's rate; otherwise it scales its own waits by the case's `time_scale`."""

import contextlib
import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from .clock import Clock


class SquallVerdictError(AssertionError):
    """A case failed a MUST, or could not be judged: the message names the failing checks."""


class Judge:
    """A squall server's judge, and the clock the clients it judges run on (None: real time)."""

    def __init__(self, url, clock=None, token=None):
        self.url = url.rstrip("/")
        self.clock = clock
        # The admin token the server requires, if any.
        self.token = token
        # Session → its calibration's one-line summary, once it ran.
        self.calibrations = {}

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        headers = {"content-type": "application/json"}
        if self.token:
            headers["authorization"] = "Bearer " + self.token
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
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
        """A run of `case_id`; `body` takes session, level, seed, herd, time_scale. On squall's
        clock it names the clock's frame, so the client is told to scale nothing."""
        if self.clock is not None:
            body["clock_frame"] = self.clock.frame
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
                reply = case.run_and_judge(run_client, timeout)
        self.calibrations[session] = reply.get("summary", "no summary")
        return True


class Case:
    """One case as a test sees it: how to configure the client, and the verdict on what it did.

    `base_url` (OpenAI, ends in /v1), `anthropic_base_url`, `gemini_base_url`, `azure_openai_endpoint`, `ollama_host`, `bedrock_base_url`
    (boto3's `endpoint_url`), `time_scale` (what the client multiplies its own waits and
    timeouts by: 1 on squall's clock), `max_retries` (None: the client's own default),
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
        # The run's scale (the server's); on squall's clock the client runs at its rate and scales nothing.
        self.run_time_scale = self.run["time_scale"]
        self.time_scale = self.run.get("client_time_scale", self.run_time_scale)
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

    @contextlib.contextmanager
    def _running(self):
        """The client's time: on squall's clock, the whole tree at the run's rate; its real
        duration in `took["ms"]` afterwards."""
        clock = self.judge.clock
        rate = 1.0 / self.run_time_scale if clock is not None else 1.0
        took = {}
        with clock.at(rate) if clock is not None else contextlib.nullcontext():
            started = clock.real_s() if clock is not None else time.monotonic()
            try:
                yield took, rate
            finally:
                ended = clock.real_s() if clock is not None else time.monotonic()
                took["ms"] = (ended - started) * 1000

    def run_and_judge(self, run_client, timeout):
        """Run `run_client(self)` for at most `timeout` real seconds and judge what it returned."""
        with self._running() as (took, rate):
            returned = _within(timeout * rate, run_client, self)
        if returned is _TIMED_OUT:
            return self.judge_outcome(None, timed_out=True, case_timeout_s=timeout)
        result, events = returned if isinstance(returned, tuple) else (returned, None)
        return self.judge_outcome(result, events, duration_ms=took["ms"])

    @contextlib.contextmanager
    def serving(self):
        """Your application's own code, unchanged, as the client: inside the block the SDKs'
        standard variables (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`,
        `OLLAMA_HOST`, `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, …) name this case's run and, on
        squall's clock, the tree runs at the case's rate. An exception from the block is the
        application's outcome (it gave up), not the test's failure: `assert_resilient()` judges it.
        The block has no time limit of squall's: give the test one of your runner's."""
        saved = {name: os.environ.get(name) for name in self.env}
        os.environ.update(self.env)
        raised = None
        try:
            with self._running() as (took, _):
                try:
                    yield self
                except Exception as error:  # the application's outcome
                    raised = error
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        self._served = (raised, took["ms"])

    def assert_resilient(self):
        """The verdict on what the wire showed while `serving()` ran, and on whether the block
        raised: checks that read what the application returned or logged (level `events`) are
        n/a, and a timed check without the session's calibration is inconclusive. Raises
        SquallVerdictError on `fail` or `error`, warns on `warn`; returns the verdict."""
        if not hasattr(self, "_served"):
            raise RuntimeError("assert_resilient() judges what ran inside `with squall_case.serving():`")
        if self.level != "wire":
            raise RuntimeError(f"serving() is judged at level wire (the application's events are not seen), not {self.level}")
        raised, ms = self._served
        if raised is None:
            result = {"ok": True, "stop_reason": "end_turn"}
        else:
            result = {"ok": False, "stop_reason": "error", "error_type": type(raised).__name__,
                      "error_message": str(raised)}
        self.verdict = self.judge_outcome(result, duration_ms=ms)
        if self.verdict.get("verdict") in ("fail", "error"):  # a calibration run's has none
            raise SquallVerdictError(describe(self.verdict))
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
            limit = timeout or self.case_timeout or 60 * max(1.0, case.run_time_scale / 0.01)
            verdict = case.run_and_judge(run_client, limit)
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
