"""Finding a squall server, or starting one for the test session."""

import atexit
import os
import subprocess

from squall import SquallNotFound, find_squall_bin

from .clock import without_clock


def squall_binary(binary=None):
    """`binary`, else $SQUALL_BIN, else the one installed with the squall wheel, else `squall` on
    the PATH; None when there is none."""
    try:
        return binary or os.environ.get("SQUALL_BIN") or find_squall_bin()
    except SquallNotFound:
        return None


def find_or_start(url=None, binary=None):
    """The server at `url` (or $SQUALL_URL); else a `squall serve` started on a free port and
    stopped when Python exits. `binary` (or $SQUALL_BIN, else the one installed with the squall
    wheel, else `squall` on the PATH) is the squall executable."""
    url = url or os.environ.get("SQUALL_URL")
    if url:
        return url.rstrip("/")
    try:
        binary = binary or os.environ.get("SQUALL_BIN") or find_squall_bin()
    except SquallNotFound as missing:
        raise RuntimeError(f"no squall server: pass --squall-url (or SQUALL_URL), or --squall-bin=PATH (or SQUALL_BIN) "
                           f"so that one is started; {missing}") from None
    # squall's own process reads real time, whatever clock pytest runs on.
    process = subprocess.Popen([binary, "serve", "--addr", "127.0.0.1:0"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env=without_clock(os.environ))
    atexit.register(_stop, process)
    line = process.stdout.readline()
    prefix = "squall listening on "
    if not line.startswith(prefix):
        _stop(process)
        raise RuntimeError(f"`{binary} serve` did not start: it printed {line!r}")
    return line[len(prefix):].strip()


def _stop(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
