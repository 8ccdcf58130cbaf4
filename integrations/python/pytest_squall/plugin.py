"""The pytest plugin: options, the `squall` marker, a test parametrized over squall's cases
(the calibration runs first when a case is timed), and the `squall_case` fixture."""

import json
import os
import warnings

import pytest

from .client import Case, Judge, describe
from .server import find_or_start


class SquallShouldWarning(UserWarning):
    """A SHOULD check missed: advice, not a failure."""


def pytest_addoption(parser):
    group = parser.getgroup("squall", "squall's judge as a service")
    group.addoption("--squall-url", help="a running squall server (default: $SQUALL_URL, else one is started)")
    group.addoption("--squall-bin", help="the squall executable to start (default: $SQUALL_BIN, else squall on the PATH)")
    group.addoption("--squall-profile", help="the profiles whose cases run (prd-0006 by default; all; seed-002, ...)")
    group.addoption("--squall-level", help="what the client reports: wire (result only, the default) or events")
    group.addoption("--squall-tags", help="only the cases matching a tag expression, e.g. '@REQ-0006-001'")
    group.addoption("--squall-session", help="the calibration session (default: one per pytest run)")
    group.addoption("--squall-seed", type=int, help="a jitter seed for the client (SQUALL_SEED)")
    group.addoption("--squall-verdicts", help="append every verdict to this file, a JSON object a line")
    group.addoption("--squall-case-timeout", type=float,
                    help="seconds a client may run in a case (default 60 at 1/100, more for a slower run)")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "squall(profile=None, level=None, tags=None, calibrate=True): run the test once per case squall judges, "
        "with the squall_case fixture",
    )


def _judge(config):
    if not hasattr(config, "_squall_judge"):
        config._squall_judge = Judge(find_or_start(config.getoption("squall_url"), config.getoption("squall_bin")))
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
    }


def pytest_generate_tests(metafunc):
    if "squall_case" not in metafunc.fixturenames:
        return
    settings = _settings(metafunc.config, metafunc.definition.get_closest_marker("squall"))
    listing = _judge(metafunc.config).cases(settings["profile"], settings["level"], settings["tags"])
    params = []
    if settings["calibrate"] and any(case["timed"] for case in listing["cases"]):
        calibration = listing["calibration"]
        for scale in calibration["time_scales"]:
            for n in range(calibration["instances_per_scale"]):
                params.append(pytest.param((calibration, scale, settings["level"]), id=f"calibration-{scale}-{n + 1}"))
    params += [pytest.param((case, None, settings["level"]), id=case["id"]) for case in listing["cases"]]
    metafunc.parametrize("squall_case", params, indirect=True)


@pytest.fixture
def squall_case(request):
    """The case this test runs: configure the client from it, then `squall_case.verify(run)`."""
    description, time_scale, level = request.param
    config = request.config
    session = config.getoption("squall_session") or f"pytest-{os.getpid()}"
    case = Case(_judge(config), description, session, level, config.getoption("squall_seed"), time_scale,
                case_timeout=config.getoption("squall_case_timeout"))
    yield case
    verdict = case.verdict
    if verdict is None:
        return
    if verdict.get("verdict") == "warn":
        warnings.warn(SquallShouldWarning(describe(verdict)))
    path = config.getoption("squall_verdicts")
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(json.dumps(verdict) + "\n")
