"""squall's clock in pytest's own process (docs/clock.md).

pytest starts itself again under `squall clock` before it loads any conftest, so the process
and everything it starts runs on squall's preload, at rate 1. For each case, the client's
calls run at the case's rate (100 at the default time scale) and the rate goes back to 1
afterwards: the SDK is called as shipped, with no clock patch. `--squall-clock=scaled` (or
SQUALL_CLOCK=scaled) keeps real time, and the client must scale its own waits.
"""

import contextlib
import ctypes
import os
import sys
import time

# The variable that names this tree's frame, and the one that chooses the clock.
FRAME = "SQUALL_CLOCK_FRAME"
CHOICE = "SQUALL_CLOCK"
CLOCK_MONOTONIC = 1


class Clock:
    """This process tree's clock: its rate, changed for a case and back, and real time."""

    def __init__(self, frame, preload):
        self.frame = frame
        self._preload = preload
        preload.squall_clock_rate.restype = ctypes.c_double
        preload.squall_clock_real_ns.restype = ctypes.c_longlong
        preload.squall_clock_set_rate.argtypes = [ctypes.c_double]

    @classmethod
    def here(cls):
        """The clock this process runs on, or None when it runs on real time."""
        frame = os.environ.get(FRAME)
        if not frame:
            return None
        preload = ctypes.CDLL(None)
        if not hasattr(preload, "squall_clock_set_rate"):
            return None  # the variable, but not the preload: real time
        return cls(frame, preload)

    def real_s(self):
        """Real monotonic time, in seconds: what a runner's own time limits are counted in."""
        return self._preload.squall_clock_real_ns(CLOCK_MONOTONIC) / 1e9

    def rate(self):
        return self._preload.squall_clock_rate()

    def _set_rate(self, rate):
        failed = self._preload.squall_clock_set_rate(rate)
        if failed:
            raise RuntimeError(f"squall clock: cannot set the rate {rate} in {self.frame}: {os.strerror(-failed)}")

    @contextlib.contextmanager
    def at(self, rate):
        """The whole tree at `rate` inside, back at 1 after; one case at a time per tree."""
        with _turn(self.frame + ".lock"):
            self._set_rate(rate)
            try:
                yield
            finally:
                self._set_rate(1.0)


@contextlib.contextmanager
def _turn(path):
    """A lock file beside the frame, holding the holder's pid: cases of one tree take turns."""
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            break
        except FileExistsError:
            if not _held_by_a_live_process(path):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                continue
            time.sleep(0.05)
    try:
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _held_by_a_live_process(path):
    try:
        with open(path, encoding="utf-8") as file:
            pid = int(file.read().strip() or 0)
    except (OSError, ValueError):
        return True  # being written: wait for it
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def started_as_pytest():
    """Whether this process is pytest itself (`pytest …`, `python -m pytest …`), which may be
    started again as it was; not a program that called `pytest.main()`."""
    program = os.path.basename(sys.argv[0]) if sys.argv else ""
    argv = getattr(sys, "orig_argv", [])
    as_module = len(argv) > 2 and argv[1] == "-m" and argv[2] in ("pytest", "py.test")
    return program in ("pytest", "py.test") or as_module or (program == "__main__.py" and "pytest" in sys.argv[0])


def why_not_restart(squall_bin):
    """Why this pytest is not started again under `squall clock`: it already runs on it (None,
    with a clock here), real time was chosen, or it cannot be."""
    if os.environ.get(FRAME):
        return None if Clock.here() else "SQUALL_CLOCK_FRAME is set but squall's preload is not loaded"
    if os.environ.get(CHOICE) == "scaled":
        return "SQUALL_CLOCK=scaled"
    if not sys.platform.startswith("linux"):
        return f"squall's clock needs Linux, not {sys.platform}"
    if not started_as_pytest():
        return "pytest was not started as a program (pytest.main), so it cannot be started again"
    if squall_bin is None:
        return "no squall executable to start pytest under"
    return ""


def restart(squall_bin):
    """Replace this process with the same pytest under `squall clock` (standard output and
    error must be the real ones again: pytest captures them by now)."""
    original = list(getattr(sys, "orig_argv", []))
    argv = [sys.executable] + (original[1:] if original else sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(squall_bin, [squall_bin, "clock", "--"] + argv)


def without_clock(env):
    """`env` for a process of squall's own (the server the plugin starts): no preload, no frame."""
    env = dict(env)
    for name in (FRAME, CHOICE):
        env.pop(name, None)
    kept = [part for part in env.get("LD_PRELOAD", "").split(":") if part and "libsquall_clock" not in part]
    if kept:
        env["LD_PRELOAD"] = ":".join(kept)
    else:
        env.pop("LD_PRELOAD", None)
    return env
