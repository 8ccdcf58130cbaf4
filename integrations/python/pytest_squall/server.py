"""Finding a squall server, or starting one for the test session."""

import atexit
import os
import shutil
import subprocess


def find_or_start(url=None, binary=None):
    """The server at `url` (or $SQUALL_URL); else a `squall serve` started on a free port and
    stopped when Python exits. `binary` (or $SQUALL_BIN, else `squall` on the PATH) is the
    squall executable."""
    url = url or os.environ.get("SQUALL_URL")
    if url:
        return url.rstrip("/")
    binary = binary or os.environ.get("SQUALL_BIN") or shutil.which("squall")
    if not binary:
        raise RuntimeError("no squall server: pass --squall-url (or SQUALL_URL), or put squall on the PATH "
                           "(or pass --squall-bin / SQUALL_BIN) so that one is started")
    process = subprocess.Popen([binary, "serve", "--addr", "127.0.0.1:0"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
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
