"""squall's warm start for a Python implementation (`squall run --warm`, docs/iut-contract.md).

One process imports what the implementation's script imports before its first statement of
its own (its leading imports, with the environment and `sys.path` settings among them), then
forks a child per case: the child takes the case's environment, its standard error to the file
squall names, its own process group, and runs the script as `__main__`, exactly as
`python SCRIPT ARGS…` would after those imports. What a fresh interpreter spends importing an
SDK (0.8 s of CPU for `import openai`) is spent once.

squall speaks to it in lines of JSON: it says {"ready": true} (or {"error": …}) once the imports
are done; to {"id": N, "env": {…}, "stderr": PATH} it answers {"id": N, "pid": P} once the child
runs and {"id": N, "exit": CODE} when the child ends (a negative CODE: the signal that ended it).
When its standard input closes, it kills every child still running and exits.

On the sped-up clock the process runs under libfaketime at a rate of 1, re-reading `FAKETIME`
at every call (`FAKETIME_NO_CACHE=1`): the child's `FAKETIME` sets its case's rate, and squall's
preload, told to read it again, writes the origin of the child's frame.
"""

import ast
import ctypes
import importlib
import json
import os
import runpy
import selectors
import signal
import sys
import threading


def leading_statements(script):
    """The script's statements before its first of its own: imports, and settings of
    `os.environ` or `sys.path` (which an import after them may read)."""
    path = os.path.join(script, "__main__.py") if os.path.isdir(script) else script
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read(), path)
    lead = []
    for node in tree.body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if docstring or isinstance(node, (ast.Import, ast.ImportFrom)) or sets_environment(node):
            lead.append(node)
        else:
            break
    return ast.Module(body=lead, type_ignores=[]), path


def sets_environment(node):
    """`os.environ[…] = …`, `os.environ.setdefault(…)`, `sys.path.insert(…)` and the like."""
    text = ast.unparse(node)
    return text.startswith(("os.environ", "sys.path"))


def warm(script):
    """Run the script's leading statements once, as the script's own directory sees them."""
    lead, path = leading_statements(script)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        exec(compile(lead, path, "exec"), {"__name__": "__squall_warm__", "__file__": path})
    finally:
        sys.path.pop(0)


def say(message):
    os.write(1, (json.dumps(message) + "\n").encode())


def serve():
    """Fork a child per request until standard input closes. Returns the request in the child."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    running = {}
    pending = b""
    say({"ready": True})
    while True:
        for key, _ in selector.select():
            if key.fd == wake_read:
                os.read(wake_read, 4096)
                reap(running)
                continue
            chunk = os.read(0, 65536)
            if not chunk:
                for pid in running:
                    kill_group(pid)
                return None
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    os.close(wake_read)
                    os.close(wake_write)
                    return request
                try:
                    os.setpgid(pid, pid)
                except OSError:
                    pass  # the child set it first, or has already ended
                running[pid] = request["id"]
                say({"id": request["id"], "pid": pid})


def reap(running):
    while running:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in running:
            say({"id": running.pop(pid), "exit": os.waitstatus_to_exitcode(status)})


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def become_case(request):
    """In the child: its own group, the case's environment and standard error, the clock's rate."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(err, 2)
    os.close(null)
    os.close(err)
    os.environ.update(request["env"])
    restart = getattr(ctypes.CDLL(None), "squall_clock_restart", None)
    if restart is not None:
        restart()


def main():
    script, args = sys.argv[1], sys.argv[2:]
    try:
        warm(script)
    except BaseException as error:  # the child would fail the same way: say so once
        say({"error": f"importing what {script} imports: {type(error).__name__}: {error}"})
        return 2
    if threading.active_count() > 1:
        say({"error": f"importing what {script} imports started a thread: a forked child would not have it"})
        return 2
    request = serve()
    if request is None:
        return 0
    become_case(request)
    sys.argv = [script] + args
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
