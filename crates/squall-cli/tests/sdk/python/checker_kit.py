"""What every SDK checker beside it shares: an assertion that names what it expected, and the
loop that runs each case, names every failure on stderr and exits non-zero if any failed."""

import sys


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def run_cases(label, cases):
    """Run every case (a function that raises on failure), then exit: 0 when all passed."""
    failed = 0
    for case in cases:
        try:
            case()
            print(f"ok   {case.__name__}")
        except Exception as error:  # report every case, then fail
            failed += 1
            print(f"FAIL {case.__name__}: {error!r}", file=sys.stderr)
    print(f"{label}: {len(cases) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
