"""`python -m squall ARGS`: the squall executable with ARGS, in this process's place."""

import os
import subprocess
import sys

from ._find import find_squall_bin


def main():
    binary = find_squall_bin()
    if sys.platform == "win32":
        sys.exit(subprocess.call([binary, *sys.argv[1:]]))
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
