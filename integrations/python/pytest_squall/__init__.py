"""pytest-squall: PRD-0006 retry verdicts from squall's judge as a service, as pytest tests.

A test that takes the `squall_case` fixture runs once per case squall judges (see
docs/service.md): it configures its client from the case, runs it against the case's base
URL, and `squall_case.verify(run)` asks squall for the verdict — a failed MUST fails the test
with the failing checks in the message; a missed SHOULD is a warning. Or it runs the
application's own code inside `with squall_case.serving():` and `squall_case.assert_resilient()`
judges what the wire showed. pytest runs on squall's clock (docs/clock.md): the client runs
unmodified, each case at its rate.
"""

from .client import Case, Judge, SquallVerdictError, scaled_time
from .server import find_or_start

__all__ = ["Case", "Judge", "SquallVerdictError", "find_or_start", "scaled_time"]
