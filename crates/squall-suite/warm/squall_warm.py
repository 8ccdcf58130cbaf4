"""squall's warm start for a Python implementation (`squall run --warm`, docs/iut-contract.md).

One process imports what the implementation's script imports before its first statement of
its own (its leading imports, with the environment and `sys.path` settings among them, and any
leading `if __name__ == "__squall_warm__":` block: what the script asks to load only when
started warm, such as a tokenizer every call would load first), then
forks a child per case: the child takes the case's environment, its standard error to the file
squall names, its own process group, and runs the script as `__main__`, exactly as
`python SCRIPT ARGS…` would after those imports. What a fresh interpreter spends importing an
SDK (0.8 s of CPU for `import openai`) is spent once. The child ends as the interpreter ends a
script (its threads awaited, atexit handlers run, open files flushed, the script's exit status),
then by `os._exit`: tearing down what it inherited, object by object, would write to every page
it shares with this process (1.3 s of CPU for litellm's, ten times its call).

squall speaks to it in lines of JSON: it says {"ready": true} (or {"error": …}) once the imports
are done; to {"id": N, "env": {…}, "stderr": PATH} it answers {"id": N, "pid": P} once the child
runs and {"id": N, "exit": CODE} when the child ends (a negative CODE: the signal that ended it).
When its standard input closes, it kills every child still running and exits.

On the sped-up clock the process has squall's preload and no frame (real time): the child's
environment names its case's frame (`SQUALL_CLOCK_FRAME`), and the preload, told to read it
again, puts the child on it.
"""

import ast
import atexit
import ctypes
import gc
import importlib
import io
import json
import os
import runpy
import selectors
import signal
import sys
import threading


def leading_statements(script):
    """The script's statements before its first of its own: imports, settings of `os.environ` or
    `sys.path` (which an import after them may read), and blocks run only when started warm."""
    path = os.path.join(script, "__main__.py") if os.path.isdir(script) else script
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read(), path)
    lead = []
    for node in tree.body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        imports = isinstance(node, (ast.Import, ast.ImportFrom))
        if docstring or imports or sets_environment(node) or only_when_warm(node):
            lead.append(node)
        else:
            break
    return ast.Module(body=lead, type_ignores=[]), path


def sets_environment(node):
    """`os.environ[…] = …`, `os.environ.setdefault(…)`, `sys.path.insert(…)` and the like."""
    text = ast.unparse(node)
    return text.startswith(("os.environ", "sys.path"))


def only_when_warm(node):
    """`if __name__ == "__squall_warm__":` with no `else`: run here, skipped by every case (each
    runs the script as `__main__`) and by a cold start."""
    return (isinstance(node, ast.If) and not node.orelse
            and ast.unparse(node.test) in ("__name__ == '__squall_warm__'", "'__squall_warm__' == __name__"))


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
    # The leading statements see the arguments the script is given, as every case does.
    sys.argv = [script] + args
    try:
        warm(script)
    except BaseException as error:  # the child would fail the same way: say so once
        say({"error": f"importing what {script} imports: {type(error).__name__}: {error}"})
        return 2
    if threading.active_count() > 1:
        say({"error": f"importing what {script} imports started a thread: a forked child would not have it"})
        return 2
    # What the imports made is the children's to share, never to collect (Python's advice
    # before a fork): a child's collections and `flush_open_files` then look at its own objects.
    gc.freeze()
    request = serve()
    if request is None:
        return 0
    become_case(request)
    end_as_python_would(run_as_main(script))


def run_as_main(script):
    """Run the script as `__main__`; its exit status, as `python SCRIPT` would give it."""
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    except BaseException:
        sys.excepthook(*sys.exc_info())
        return 1
    return 0


def end_as_python_would(status):
    """End the child as the interpreter ends — its other threads awaited, its atexit handlers
    run, what it left open flushed — but without freeing every imported module object by
    object: that writes to each page the child still shares with the warm process (1.3 s of CPU
    for litellm's). Forked processes end so in multiprocessing too (os._exit)."""
    # The interpreter's own first step at exit: the hooks that stop thread pools' workers
    # (concurrent.futures registers one), then every thread that is not a daemon awaited.
    threading._shutdown()
    atexit._run_exitfuncs()
    flush_open_files()
    os._exit(status)


def flush_open_files():
    """Flush every file the case opened and did not close, as the interpreter's teardown would.
    The warm process's objects are frozen, so only the case's own are looked at."""
    for thing in gc.get_objects():
        if isinstance(thing, io.IOBase):
            try:
                if not thing.closed:
                    thing.flush()
            except (OSError, ValueError):
                pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


if __name__ == "__main__":
    sys.exit(main())
