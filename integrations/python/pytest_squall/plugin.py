"""The pytest plugin: options, the `squall` marker, a test parametrized over squall's cases,
and the `squall_case` fixture. pytest starts itself again on squall's clock before it loads any
conftest (`clock.py`). The session's calibration runs inside the first timed case that needs it
(so `-k` and `--lf` keep it), and its one-line summary ends the run's report."""

import json
import os
import shlex
import warnings

import pytest

from . import clock
from .client import Case, Judge, describe
from .server import find_or_start, squall_binary


class SquallShouldWarning(UserWarning):
    """A SHOULD check missed: advice, not a failure."""


def pytest_addoption(parser):
    group = parser.getgroup("squall", "squall's judge as a service")
    group.addoption("--squall-url", help="a running squall server (default: $SQUALL_URL, else one is started)")
    group.addoption("--squall-bin", help="the squall executable to start (default: $SQUALL_BIN, else the one "
                                         "the squall wheel installed, else squall on the PATH)")
    group.addoption("--squall-profile", help="the profiles whose cases run (prd-0006 by default; all; seed-002, ...)")
    group.addoption("--squall-level", help="what the client reports: wire (result only, the default) or events")
    group.addoption("--squall-tags", help="only the cases matching a tag expression, e.g. '@REQ-0006-001'")
    group.addoption("--squall-session", help="the calibration session (default: one per pytest run)")
    group.addoption("--squall-seed", type=int, help="a jitter seed for the client (SQUALL_SEED)")
    group.addoption("--squall-verdicts", help="append every verdict to this file, a JSON object a line")
    group.addoption("--squall-case-timeout", type=float,
                    help="seconds a client may run in a case (default 60 at 1/100, more for a slower run)")
    group.addoption("--squall-clock", choices=("auto", "scaled"),
                    help="auto (the default): pytest runs on squall's clock and each case's client at the "
                         "case's rate, unmodified; scaled: real time, the client scales its own waits "
                         "by the case's time_scale (also SQUALL_CLOCK=scaled)")
    group.addoption("--squall-time-scale", type=float,
                    help="run every case at this time scale; 1 for a client whose waits cannot be scaled "
                         "(each case then takes its production time: minutes)")


# Options whose value is a path: written `--opt PATH`, pytest takes PATH for a test path when it
# chooses its rootdir (before any plugin's options are known), so `--opt=PATH` is required.
_PATH_OPTIONS = ("--squall-bin", "--squall-verdicts")


def _space_form(config):
    """The path option given as two arguments, if any."""
    args = list(config.invocation_params.args) + shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    return next((arg for arg in args if arg in _PATH_OPTIONS), None)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Start pytest again on squall's clock, before any conftest runs (docs/clock.md)."""
    known = early_config.known_args_namespace
    if getattr(known, "squall_clock", None) == "scaled":
        os.environ[clock.CHOICE] = "scaled"
    binary = squall_binary(getattr(known, "squall_bin", None))
    why_not = clock.why_not_restart(binary)
    if why_not == "":
        capture = early_config.pluginmanager.getplugin("capturemanager")
        if capture is not None:
            capture.stop_global_capturing()
        clock.restart(binary)
    early_config._squall_clock_why_not = why_not


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "squall(profile=None, level=None, tags=None, calibrate=True, time_scale=None): run the test once per "
        "case squall judges, with the squall_case fixture; calibrate='tests' runs the calibration as tests of "
        "their own first (for tests that judge code in `with squall_case.serving():`)",
    )
    option = _space_form(config)
    if option:
        raise pytest.UsageError(
            f"write {option}=PATH, not {option} PATH: pytest chooses its rootdir before it knows {option} takes "
            f"a value, and took PATH for a test path (rootdir: {config.rootpath})"
        )


def pytest_terminal_summary(terminalreporter, config):
    judge = getattr(config, "_squall_judge", None)
    if judge is None:
        return
    for session, summary in judge.calibrations.items():
        terminalreporter.write_line(f"squall calibration of session {session}: {summary}")
    if judge.clock is None:
        why = getattr(config, "_squall_clock_why_not", None) or "real time"
        terminalreporter.write_line(f"squall: the clients ran on real time, scaling their own waits ({why})")


def _judge(config):
    if not hasattr(config, "_squall_judge"):
        config._squall_judge = Judge(find_or_start(config.getoption("squall_url"), config.getoption("squall_bin")),
                                     clock.Clock.here())
    return config._squall_judge


def _settings(config, marker):
    kwargs = marker.kwargs if marker else {}
    tags = [t for t in (kwargs.get("tags"), config.getoption("squall_tags")) if t]
    return {
        "profile": kwargs.get("profile") or config.getoption("squall_profile"),
        "level": kwargs.get("level") or config.getoption("squall_level") or "wire",
        # Herds run many clients at once: `squall run --herd` judges them.
        "tags": " and ".join(f"({t})" for t in tags + ["not @herd"]),
        "calibrate": kwargs.get("calibrate", True),
        "time_scale": kwargs.get("time_scale") or config.getoption("squall_time_scale"),
    }


def pytest_generate_tests(metafunc):
    if "squall_case" not in metafunc.fixturenames:
        return
    settings = _settings(metafunc.config, metafunc.definition.get_closest_marker("squall"))
    listing = _judge(metafunc.config).cases(settings["profile"], settings["level"], settings["tags"])
    calibration = listing["calibration"] if settings["calibrate"] else None
    params = [pytest.param((case, settings, calibration, None), id=case["id"]) for case in listing["cases"]]
    if settings["calibrate"] == "tests":
        # The same test, run on the calibration case at each of its scales before any case: code
        # judged with no callback can be run again only as a test of its own.
        scales = [scale for scale in calibration["time_scales"] for _ in range(calibration["instances_per_scale"])]
        params[:0] = [pytest.param((calibration, settings, None, scale), id=f"calibration-{n + 1}-of-{len(scales)}")
                      for n, scale in enumerate(scales)]
    metafunc.parametrize("squall_case", params, indirect=True)


@pytest.fixture
def squall_case(request):
    """The case this test runs: configure the client from it, then `squall_case.verify(run)`."""
    description, settings, calibration, calibration_scale = request.param
    config = request.config
    session = config.getoption("squall_session") or f"pytest-{os.getpid()}"
    judge = _judge(config)
    case = Case(judge, description, session, settings["level"], config.getoption("squall_seed"),
                calibration_scale or settings["time_scale"], case_timeout=config.getoption("squall_case_timeout"),
                calibration=calibration)
    yield case
    verdict = case.verdict
    if verdict is None:
        return
    if calibration_scale is not None:
        judge.calibrations[session] = verdict.get("summary", "no summary")
        return
    if verdict.get("verdict") == "warn":
        warnings.warn(SquallShouldWarning(describe(verdict)))
    path = config.getoption("squall_verdicts")
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(json.dumps(verdict) + "\n")
