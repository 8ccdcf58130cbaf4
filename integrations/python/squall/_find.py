"""Where pip put the `squall` executable the wheel carries.

A wheel's scripts go to the install scheme's `scripts` directory: the venv's or the system's
`bin`, the user scheme's under `--user`, `<target>/bin` under `--target` and `<prefix>/bin`
under `--prefix`. Only the first two are known to `sysconfig`; the last two are found from
where this package itself was put (`<target>/squall/`, `<prefix>/lib/pythonX.Y/site-packages/
squall/`). `PATH` comes last: a squall built from a clone, or installed some other way.
"""

import os
import shutil
import sys
import sysconfig
from pathlib import Path

EXECUTABLE = "squall.exe" if sys.platform == "win32" else "squall"


class SquallNotFound(FileNotFoundError):
    """No squall executable was found: the message lists every place looked at."""


def _scheme_scripts(scheme=None):
    try:
        path = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
    except KeyError:
        return None
    return Path(path) if path else None


def _user_scheme():
    if hasattr(sysconfig, "get_preferred_scheme"):  # Python 3.10+
        return sysconfig.get_preferred_scheme("user")
    return "osx_framework_user" if sys.platform == "darwin" and sys._framework else f"{os.name}_user"


def candidates():
    """Every place the executable may be, in the order they are tried."""
    package = Path(__file__).resolve().parent
    places = [_scheme_scripts(), _scheme_scripts(_user_scheme())]
    # --target DIR: this package in DIR, the scripts in DIR/bin.
    places.append(package.parent / "bin")
    # --prefix DIR: this package in DIR/lib/pythonX.Y/site-packages, the scripts in DIR/bin.
    places.append(package.parents[3] / "bin" if len(package.parents) > 3 else None)
    return [place / EXECUTABLE for place in places if place is not None]


def find_squall_bin():
    """The path of the `squall` executable: the one pip installed with this package, else the
    first on `PATH`. Raises `SquallNotFound`, naming where it looked, when there is none."""
    tried = candidates()
    for path in tried:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    on_path = shutil.which(EXECUTABLE)
    if on_path:
        return on_path
    looked = ", ".join(str(path) for path in tried)
    raise SquallNotFound(f"no squall executable: not in {looked}, nor on PATH (pip install squall, or build it: "
                         "cargo install --path crates/squall-cli)")
