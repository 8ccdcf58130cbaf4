"""squall, installed from a wheel: the `squall` executable the wheel carries, and how to find it.

`find_squall_bin()` returns the path of that executable wherever pip put it (a venv, the
system, `--user`, `--target`, `--prefix`); `python -m squall ARGS` runs it. The pytest plugin
(`pytest_squall`) starts its server with it when no `--squall-bin` or `$SQUALL_BIN` is given.
"""

from ._find import SquallNotFound, find_squall_bin

__all__ = ["SquallNotFound", "find_squall_bin"]
