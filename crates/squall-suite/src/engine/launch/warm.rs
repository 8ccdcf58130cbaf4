//! A Python implementation started warm (`squall run --warm`): one process imports what its
//! script imports, once, and forks a child per case (`warm/squall_warm.py`, which says how).
//! Each child is a case's process as `command` would start one — the contract's environment, its
//! own process group, killed with it at the case timeout or once its case is decided — less the
//! interpreter's start and the SDK's import, which a fresh process pays every case (0.8 s of CPU
//! for `import openai`, 3 s for litellm).
//!
//! On the sped-up clock the server has squall's preload and no frame (real time); each child
//! attaches to its case's frame, named in the environment it is given.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

use super::clock::ProcessClock;
use super::command::{kill_group, STDERR_TAIL_BYTES};
use super::ProcessEnd;
use crate::cache::cached_file;

/// The launcher, embedded.
const LAUNCHER: &str = include_str!("../../../warm/squall_warm.py");

/// How long the server may take to import what the script imports.
const READY_WITHIN: Duration = Duration::from_secs(120);

/// How long a child may take to be forked, and to be reported ended once killed.
const REPLY_WITHIN: Duration = Duration::from_secs(30);

/// The warm servers of one suite run: one for the clock its cases run on (the calibration may
/// settle for another clock than the one first tried).
#[derive(Debug, Default)]
pub(crate) struct WarmPool {
    server: tokio::sync::Mutex<Option<(bool, Arc<WarmServer>)>>,
}

impl WarmPool {
    /// The server for `command` on `clock`, started on first use.
    async fn server(&self, command: &str, clock: &ProcessClock) -> std::io::Result<Arc<WarmServer>> {
        let mut server = self.server.lock().await;
        match &*server {
            // A server that ended (killed, or crashed by a case's import-time side effect) is
            // started again: the cases after it are not all lost.
            Some((sped_up, warm)) if *sped_up == clock.is_sped_up() && warm.is_running() => Ok(warm.clone()),
            _ => {
                let warm = Arc::new(WarmServer::start(command, clock).await?);
                *server = Some((clock.is_sped_up(), warm.clone()));
                Ok(warm)
            }
        }
    }

    /// Run one case's process of `command` on `clock`, as [`super::command::run`] does.
    pub(super) async fn run(
        &self,
        command: &str,
        clock: &ProcessClock,
        env: &[(&'static str, String)],
        out_dir: &Path,
        timeout: Duration,
        stop_early: impl std::future::Future<Output = ()>,
    ) -> std::io::Result<ProcessEnd> {
        let server = self.server(command, clock).await?;
        server.run(env, &out_dir.join(".squall-stderr"), timeout, stop_early).await
    }
}

/// What the server says of one child.
#[derive(Debug, Default)]
struct Awaited {
    pid: Option<oneshot::Sender<u32>>,
    exit: Option<oneshot::Sender<i32>>,
}

/// One warm server: its process, what it was asked, and its children awaited.
#[derive(Debug)]
struct WarmServer {
    stdin: tokio::sync::Mutex<tokio::process::ChildStdin>,
    awaited: Arc<Mutex<HashMap<u64, Awaited>>>,
    next: AtomicU64,
    /// False once its replies end: the process is gone.
    running: Arc<AtomicBool>,
    /// Its standard error, quoted when it ends or cannot start.
    said: tempfile::NamedTempFile,
    /// Killed with the pool.
    _process: tokio::process::Child,
}

impl WarmServer {
    /// Start `command` (`[NAME=VALUE…] PYTHON SCRIPT [ARG…]`, shell words) warm on `clock`, once
    /// it has imported what the script imports.
    async fn start(command: &str, clock: &ProcessClock) -> std::io::Result<WarmServer> {
        let (assigned, python, script, args) = python_command(command)?;
        let launcher = cached_file("squall_warm", "py", LAUNCHER.as_bytes())?;
        let said = tempfile::NamedTempFile::new()?;
        let mut argv = vec![python, launcher.display().to_string(), script];
        argv.extend(args);
        let env = clock.warm_server_env();
        let Some((program, rest)) = argv.split_first() else { return Err(invalid("no program".to_owned())) };
        let mut process = tokio::process::Command::new(program)
            .args(rest)
            .envs(assigned)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(said.reopen()?)
            .kill_on_drop(true)
            .spawn()?;
        let (stdin, stdout) = (process.stdin.take(), process.stdout.take());
        let (Some(stdin), Some(stdout)) = (stdin, stdout) else { return Err(invalid("no pipes".to_owned())) };
        let awaited: Arc<Mutex<HashMap<u64, Awaited>>> = Arc::default();
        let running = Arc::new(AtomicBool::new(true));
        let (ready_tx, ready_rx) = oneshot::channel();
        tokio::spawn(read_replies(BufReader::new(stdout), awaited.clone(), running.clone(), ready_tx));
        let ready = tokio::time::timeout(READY_WITHIN, ready_rx).await;
        match ready {
            Ok(Ok(Ok(()))) => Ok(WarmServer {
                stdin: stdin.into(),
                awaited,
                next: AtomicU64::new(1),
                running,
                said,
                _process: process,
            }),
            Ok(Ok(Err(said))) => Err(invalid(format!("--warm: {said}"))),
            _ => {
                let _ = process.start_kill();
                let _ = tokio::time::timeout(Duration::from_secs(1), process.wait()).await;
                Err(invalid(format!(
                    "--warm: {command} did not get ready as a Python implementation: {}",
                    tail_of(said.path()).trim()
                )))
            }
        }
    }

    async fn run(
        &self,
        env: &[(&'static str, String)],
        stderr_file: &Path,
        timeout: Duration,
        stop_early: impl std::future::Future<Output = ()>,
    ) -> std::io::Result<ProcessEnd> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (pid_tx, pid_rx) = oneshot::channel();
        let (exit_tx, mut exit_rx) = oneshot::channel();
        self.lock().insert(id, Awaited { pid: Some(pid_tx), exit: Some(exit_tx) });
        let env: HashMap<&str, &str> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let request = serde_json::json!({ "id": id, "env": env, "stderr": stderr_file });
        let mut line = request.to_string();
        line.push('\n');
        if self.stdin.lock().await.write_all(line.as_bytes()).await.is_err() {
            return Err(self.ended());
        }
        let pid = match tokio::time::timeout(REPLY_WITHIN, pid_rx).await {
            Ok(Ok(pid)) => pid,
            Ok(Err(_)) => return Err(self.ended()),
            Err(_) => return Err(std::io::Error::other("the warm server did not start the case's process")),
        };
        let (exit, timed_out) = tokio::select! {
            exit = &mut exit_rx => match exit {
                Ok(code) => (Some(code), false),
                Err(_) => {
                    kill_group(pid);
                    return Err(self.ended());
                }
            },
            () = tokio::time::sleep(timeout) => (None, true),
            () = stop_early => (None, true),
        };
        kill_group(pid);
        let exit = match (exit, timed_out) {
            (Some(code), _) => Some(code),
            (None, true) => tokio::time::timeout(REPLY_WITHIN, exit_rx).await.ok().and_then(Result::ok),
            (None, false) => None,
        };
        self.lock().remove(&id);
        let exit_code = exit.filter(|code| *code >= 0);
        Ok(ProcessEnd { stderr: tail_of(stderr_file), exit_code, timed_out })
    }

    fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// Why a case's process was lost: the server ended, saying this.
    fn ended(&self) -> std::io::Error {
        std::io::Error::other(format!(
            "the warm server ended (the next case starts another): {}",
            tail_of(self.said.path()).trim()
        ))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Awaited>> {
        self.awaited.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The server's replies, handed to whoever awaits them; the first says whether it is ready.
/// When they end, the server is marked ended and whoever still awaits a reply is told at once.
async fn read_replies(
    mut stdout: BufReader<tokio::process::ChildStdout>,
    awaited: Arc<Mutex<HashMap<u64, Awaited>>>,
    running: Arc<AtomicBool>,
    ready: oneshot::Sender<Result<(), String>>,
) {
    let mut ready = Some(ready);
    let mut line = String::new();
    while stdout.read_line(&mut line).await.is_ok_and(|n| n > 0) {
        let reply: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        line.clear();
        if let Some(said) = reply.get("error").and_then(|e| e.as_str()) {
            if let Some(ready) = ready.take() {
                let _ = ready.send(Err(said.to_owned()));
            }
            continue;
        }
        if reply.get("ready").is_some() {
            if let Some(ready) = ready.take() {
                let _ = ready.send(Ok(()));
            }
            continue;
        }
        let Some(id) = reply.get("id").and_then(serde_json::Value::as_u64) else { continue };
        let mut awaited = awaited.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(child) = awaited.get_mut(&id) else { continue };
        if let Some(pid) = reply.get("pid").and_then(serde_json::Value::as_u64) {
            if let Some(send) = child.pid.take() {
                let _ = send.send(u32::try_from(pid).unwrap_or(0));
            }
        }
        if let Some(code) = reply.get("exit").and_then(serde_json::Value::as_i64) {
            if let Some(send) = child.exit.take() {
                let _ = send.send(i32::try_from(code).unwrap_or(-1));
            }
        }
    }
    running.store(false, Ordering::Release);
    awaited.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
}

/// The last [`STDERR_TAIL_BYTES`] of the child's standard error.
fn tail_of(file: &Path) -> String {
    let bytes = std::fs::read(file).unwrap_or_default();
    let start = bytes.len().saturating_sub(STDERR_TAIL_BYTES);
    let text = String::from_utf8_lossy(&bytes[start..]);
    match start {
        0 => text.into_owned(),
        earlier => format!("[… {earlier} earlier bytes of stderr left out]\n{text}"),
    }
}

/// What `--warm` can start: `[NAME=VALUE…] PYTHON SCRIPT [ARG…]` as shell words, nothing that
/// needs a shell (a pipe, a redirection, an expansion); the variables apart.
type PythonCommand = (Vec<(String, String)>, String, String, Vec<String>);

fn python_command(command: &str) -> std::io::Result<PythonCommand> {
    let expected = || invalid(format!("--warm runs `[NAME=VALUE…] PYTHON SCRIPT [ARG…]`, not {command:?}"));
    if command.contains(['$', '`', '|', ';', '&', '<', '>']) {
        return Err(expected());
    }
    let words = shlex::split(command).ok_or_else(expected)?;
    let assignment = |word: &String| {
        let (name, value) = word.split_once('=')?;
        let valid = !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
        valid.then(|| (name.to_owned(), value.to_owned()))
    };
    let assigned: Vec<(String, String)> = words.iter().map_while(assignment).collect();
    match &words[assigned.len()..] {
        [python, script, args @ ..] => Ok((assigned, python.clone(), script.clone(), args.to_vec())),
        _ => Err(expected()),
    }
}

fn invalid(why: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, why)
}

#[cfg(test)]
mod tests {
    use super::{python_command, WarmPool};
    use crate::engine::launch::{ProcessClock, ProcessEnd};
    use std::path::Path;
    use std::time::Duration;

    /// One case of `command` through `pool`, on the scaled clock, with 20 s to end.
    async fn run_case(
        pool: &WarmPool,
        command: &str,
        env: &[(&'static str, String)],
        dir: &Path,
    ) -> std::io::Result<ProcessEnd> {
        pool.run(command, &ProcessClock::Scaled, env, dir, Duration::from_secs(20), std::future::pending()).await
    }

    #[tokio::test]
    async fn a_warm_server_that_ends_is_started_again_for_the_next_case() {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = dir.path().join("kills_its_server.py");
        let marker = dir.path().join("killed");
        // Its first child kills the server it was forked from; every child then exits 3.
        std::fs::write(
            &script,
            "import os, signal, sys\n\
             if not os.path.exists(sys.argv[1]):\n    \
             open(sys.argv[1], 'w').close()\n    \
             os.kill(os.getppid(), signal.SIGKILL)\n\
             sys.exit(3)\n",
        )
        .expect("script");
        let command = format!("python3 '{}' '{}'", script.display(), marker.display());
        let pool = WarmPool::default();
        let lost = run_case(&pool, &command, &[], dir.path()).await.expect_err("the case whose server died is lost");
        assert!(lost.to_string().contains("the warm server ended"), "{lost}");
        let next = run_case(&pool, &command, &[], dir.path()).await.expect("the next case gets a new server");
        assert_eq!(next.exit_code, Some(3), "{next:?}");
    }

    #[tokio::test]
    async fn a_warm_only_block_runs_once_in_the_warm_process_and_never_in_a_case() {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = dir.path().join("warms_up.py");
        let log = dir.path().join("log");
        // The block appends "warm" once; every case appends what it ran as and what the block left.
        std::fs::write(
            &script,
            "import sys\n\
             LOADED = []\n\
             if __name__ == '__squall_warm__':\n    \
             LOADED.append('loaded')\n    \
             open(sys.argv[1], 'a').write('warm\\n')\n\
             open(sys.argv[1], 'a').write(f'{__name__} {LOADED}\\n')\n",
        )
        .expect("script");
        // `LOADED = []` is a statement of its own: the block after it is not leading, so a
        // second script with the block first shows what a leading block shares.
        let leading = dir.path().join("leading.py");
        std::fs::write(
            &leading,
            "import sys\n\
             import json\n\
             if __name__ == '__squall_warm__':\n    \
             json.LOADED = 'loaded'\n    \
             open(sys.argv[1], 'a').write('warm\\n')\n\
             open(sys.argv[1], 'a').write(f'{__name__} {getattr(json, \"LOADED\", None)}\\n')\n",
        )
        .expect("script");
        for script in [&script, &leading] {
            let pool = WarmPool::default();
            let command = format!("python3 '{}' '{}'", script.display(), log.display());
            for _ in 0..2 {
                let ran = run_case(&pool, &command, &[], dir.path()).await.expect("the case runs");
                assert_eq!(ran.exit_code, Some(0), "{ran:?}");
            }
        }
        let log = std::fs::read_to_string(&log).expect("log");
        assert_eq!(log, "__main__ []\n__main__ []\nwarm\n__main__ loaded\n__main__ loaded\n");
    }

    #[tokio::test]
    async fn a_case_ends_as_python_would_end_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = dir.path().join("ends.py");
        // What an interpreter's exit does for a script: a file left open is flushed, a thread
        // still running is awaited, a thread pool's idle workers told to stop, atexit handlers
        // run, the exit status is the script's.
        std::fs::write(
            &script,
            "import atexit, os, sys, threading, time\n\
             log = open(os.path.join(sys.argv[1], 'log'), 'w')\n\
             log.write('left open\\n')\n\
             def late():\n    \
             time.sleep(0.2)\n    \
             log.write('thread\\n')\n\
             threading.Thread(target=late).start()\n\
             from concurrent.futures import ThreadPoolExecutor\n\
             sys.kept = ThreadPoolExecutor(1)\n\
             sys.kept.submit(time.sleep, 0)\n\
             atexit.register(lambda: log.write('atexit\\n'))\n\
             how = os.environ['HOW']\n\
             if how == 'raise':\n    \
             raise RuntimeError('uncaught')\n\
             if how == 'message':\n    \
             sys.exit('a message')\n\
             sys.exit(int(how))\n",
        )
        .expect("script");
        let command = format!("python3 '{}' '{}'", script.display(), dir.path().display());
        let pool = WarmPool::default();
        for (how, status, said) in
            [("0", 0, ""), ("3", 3, ""), ("raise", 1, "RuntimeError: uncaught"), ("message", 1, "a message")]
        {
            let env = [("HOW", how.to_owned())];
            let ended = run_case(&pool, &command, &env, dir.path()).await.expect("the case runs");
            assert_eq!(ended.exit_code, Some(status), "{how}: {ended:?}");
            assert!(ended.stderr.contains(said), "{how}: {ended:?}");
            let log = std::fs::read_to_string(dir.path().join("log")).expect("log");
            assert_eq!(log, "left open\nthread\natexit\n", "{how}");
        }
    }

    #[test]
    fn a_python_command_is_read_as_shell_words_with_its_variables_apart() {
        let (assigned, python, script, args) =
            python_command("PRD0006_BUG=x PYTHONDONTWRITEBYTECODE= '/usr/bin/python3' 'a dir/prd0006' --fast")
                .expect("a Python command");
        let assigned: Vec<(&str, &str)> = assigned.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(assigned, [("PRD0006_BUG", "x"), ("PYTHONDONTWRITEBYTECODE", "")]);
        assert_eq!(
            (python.as_str(), script.as_str(), args),
            ("/usr/bin/python3", "a dir/prd0006", vec!["--fast".to_owned()])
        );
        for needs_a_shell in ["python3 a.py | tee log", "python3 $SCRIPT", "python3", "X=1 python3", "python3 'a.py"] {
            let refused = python_command(needs_a_shell).expect_err(needs_a_shell).to_string();
            assert!(refused.contains("--warm runs `[NAME=VALUE…] PYTHON SCRIPT [ARG…]`"), "{refused}");
        }
    }
}
