//! squall's clock reaches every wait a client makes (`squall clock --rate 100 -- …`): each kind
//! of wait, asked for [`ASKED_S`] seconds, takes between half and three times `ASKED_S / 100` of
//! real time, and the clock read after it has moved at least [`ASKED_S`] — in Python, Node, Rust,
//! curl and a shell; an exec'd child continues its parent's clock; a rate change mid-process keeps
//! the clock monotonic and takes effect.
//!
//! Each probe prints `start NAME SEEN_NS` and `end NAME SEEN_NS` around a wait; the test stamps
//! every line with real time as it arrives, so the real time a wait took is measured outside the
//! clock it tests. 20 s asked is 200 ms real at ×100: a machine busy enough to delay a line by
//! 400 ms would be needed to fail a correct clock, and a wait the clock misses takes 20 s.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::kit::command::squall_bin;
use crate::kit::harness::require;
use crate::kit::suites::root;

/// What each wait asks for, in seconds of the client's own time.
const ASKED_S: f64 = 20.0;
const RATE: f64 = 100.0;

/// One line a probe printed, and when it arrived.
struct Line {
    words: Vec<String>,
    at: Instant,
}

/// How long a probe may take: its waits take seconds; one the clock missed takes 20 s or more.
const PROBE_LIMIT: Duration = Duration::from_secs(30);

/// Run `argv` under `squall clock --rate 100`; every line it printed, stamped (killed after
/// [`PROBE_LIMIT`]: the lines until then); its stderr.
fn observe(argv: &[String], env: &[(&str, &str)]) -> (Vec<Line>, String) {
    let mut child = Command::new(squall_bin())
        .args(["clock", "--rate", &RATE.to_string(), "--"])
        .args(argv)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("squall clock starts");
    let stderr = child.stderr.take().expect("stderr");
    let said = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let stdout = child.stdout.take().expect("stdout");
    let read = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .map(|line| Line { words: line.split_whitespace().map(str::to_owned).collect(), at: Instant::now() })
            .collect::<Vec<Line>>()
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waited") {
            break Some(status);
        }
        if started.elapsed() > PROBE_LIMIT {
            // squall clock passes SIGTERM on; its child's own children end with the pipe.
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let lines = read.join().unwrap_or_default();
    let stderr = said.join().unwrap_or_default();
    if let Some(status) = status {
        assert!(status.success(), "{argv:?} under squall clock: {status}\n{stderr}");
    }
    (lines, stderr)
}

/// A wait as observed: the real time between its lines, the seen time between its readings.
#[derive(Debug)]
struct Wait {
    real: Duration,
    seen_ns: i128,
}

fn waits(lines: &[Line]) -> BTreeMap<String, Wait> {
    let mut started: BTreeMap<&str, (&Line, i128)> = BTreeMap::new();
    let mut waits = BTreeMap::new();
    for line in lines {
        let (Some(kind), Some(name), Some(seen)) = (line.words.first(), line.words.get(1), line.words.get(2)) else {
            continue;
        };
        let Ok(seen) = seen.parse::<i128>() else { continue };
        match kind.as_str() {
            "start" => {
                started.insert(name, (line, seen));
            }
            "end" => {
                if let Some((start, seen_then)) = started.remove(name.as_str()) {
                    waits.insert(name.clone(), Wait { real: line.at - start.at, seen_ns: seen - seen_then });
                }
            }
            _ => {}
        }
    }
    waits
}

/// What is wrong with `wait` named `name`, if anything. libuv's timers count whole milliseconds
/// and fire once that count reaches theirs (on real time too), so Node's may read up to 1 ms short.
fn misread(name: &str, wait: &Wait) -> Option<String> {
    let asked_real = Duration::from_secs_f64(ASKED_S / RATE);
    let short_ms = if name.starts_with("node-") { 1.0 } else { 0.0 };
    let seen_s = wait.seen_ns as f64 / 1e9;
    let real_ok = wait.real >= asked_real / 2 && wait.real <= asked_real * 3;
    let seen_ok = seen_s >= ASKED_S - short_ms / 1000.0;
    (!real_ok || !seen_ok).then(|| {
        format!(
            "{name}: took {:.1} ms real (expected {:.0}–{:.0}) and the clock moved {seen_s:.3} s (expected at least {ASKED_S} s)",
            wait.real.as_secs_f64() * 1000.0,
            asked_real.as_secs_f64() * 500.0,
            asked_real.as_secs_f64() * 3000.0
        )
    })
}

fn check_waits(observed: &BTreeMap<String, Wait>, expected: &[&str], problems: &mut Vec<String>) {
    for name in expected {
        match observed.get(*name) {
            Some(wait) => problems.extend(misread(name, wait)),
            None => problems.push(format!("{name}: no start and end seen")),
        }
    }
}

fn words(argv: &[&str]) -> Vec<String> {
    argv.iter().map(|word| (*word).to_owned()).collect()
}

#[test]
fn every_wait_a_client_makes_is_sped_up_and_the_clock_it_reads_moves_as_far() {
    // Accepted by the kernel, never answered: a socket read and a fetch wait on it until they time out.
    let silent = TcpListener::bind("127.0.0.1:0").expect("a listener");
    let port = silent.local_addr().expect("its address").port().to_string();
    let asked = ASKED_S.to_string();
    let fixtures = root().join("crates/squall-cli/tests/fixtures/clock");
    let mut problems = Vec::new();

    let (python, _) =
        observe(&words(&["python3", &fixtures.join("probe.py").display().to_string(), &asked, &port]), &[]);
    let python_waits = [
        "python-time.sleep",
        "python-asyncio.sleep",
        "python-threading.Event.wait",
        "python-queue.Queue.get",
        "python-socket-timeout",
        "python-select",
    ];
    check_waits(&waits(&python), &python_waits, &mut problems);
    let said =
        |first: &str| python.iter().find(|line| line.words.first().is_some_and(|w| w == first)).map(|l| &l.words[1..]);
    match said("child").map(|w| w.iter().filter_map(|n| n.parse::<i128>().ok()).collect::<Vec<_>>()).as_deref() {
        Some([before, child, after]) if before <= child && child <= after => {}
        other => {
            problems.push(format!("an exec'd child did not read its parent's clock: before, child, after = {other:?}"))
        }
    }
    let rates: Vec<f64> = python
        .iter()
        .filter(|line| line.words[0] == "rate")
        .filter_map(|line| line.words.get(1)?.parse().ok())
        .collect();
    if rates != [1.0, 100.0] {
        problems.push(format!("the rate read after changing it to 1, then 100: {rates:?}"));
    }
    if said("monotonic").and_then(|w| w.first()).map(String::as_str) != Some("True") {
        problems.push(format!("the clock went back across a rate change: {:?}", said("monotonic")));
    }

    let (node, _) = observe(&words(&["node", &fixtures.join("probe.mjs").display().to_string(), &asked, &port]), &[]);
    check_waits(&waits(&node), &["node-setTimeout", "node-AbortSignal.timeout", "node-fetch-abort"], &mut problems);

    let shell = format!(
        "echo start sh-sleep $(date +%s%N); sleep {asked}; echo end sh-sleep $(date +%s%N); \
         echo start curl-max-time $(date +%s%N); curl -s --max-time {asked} http://127.0.0.1:{port}/; \
         echo end curl-max-time $(date +%s%N)"
    );
    let (shell, _) = observe(&words(&["sh", "-c", &shell]), &[]);
    check_waits(&waits(&shell), &["sh-sleep", "curl-max-time"], &mut problems);

    let me = std::env::current_exe().expect("this test binary");
    let argv = [
        me.display().to_string(),
        "--exact".into(),
        "suite::clock_matrix::probe_rust_waits".into(),
        "--nocapture".into(),
        "--include-ignored".into(),
    ];
    let (rust, _) = observe(&argv, &[("SQUALL_CLOCK_PROBE", &asked)]);
    check_waits(
        &waits(&rust),
        &[
            "rust-thread::sleep",
            "rust-Condvar::wait_timeout",
            "rust-park_timeout",
            "rust-tokio::time::sleep",
            "rust-tokio::time::timeout",
        ],
        &mut problems,
    );
    drop(silent);
    require(problems.is_empty(), &problems.join("\n"));
}

/// Not a test of its own: the Rust waits, which the test above runs in a child of this binary on
/// the clock (`SQUALL_CLOCK_PROBE` set to the seconds asked). Without it, it returns at once.
#[test]
fn probe_rust_waits() {
    let Some(asked) = std::env::var("SQUALL_CLOCK_PROBE").ok().and_then(|s| s.parse::<f64>().ok()) else { return };
    let asked = Duration::from_secs_f64(asked);
    let origin = Instant::now();
    let seen = || origin.elapsed().as_nanos();
    let timed = |name: &str, wait: &dyn Fn()| {
        println!("start {name} {}", seen());
        wait();
        println!("end {name} {}", seen());
    };
    timed("rust-thread::sleep", &|| std::thread::sleep(asked));
    timed("rust-Condvar::wait_timeout", &|| {
        let pair = (std::sync::Mutex::new(()), std::sync::Condvar::new());
        let guard = pair.0.lock().expect("lock");
        drop(pair.1.wait_timeout(guard, asked).expect("waited"));
    });
    timed("rust-park_timeout", &|| std::thread::park_timeout(asked));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    timed("rust-tokio::time::sleep", &|| runtime.block_on(async { tokio::time::sleep(asked).await }));
    timed("rust-tokio::time::timeout", &|| {
        let _ = runtime.block_on(async { tokio::time::timeout(asked, std::future::pending::<()>()).await });
    });
}

#[test]
fn squall_clock_passes_the_commands_status_on_and_leaves_no_frame_behind() {
    let said = Command::new(squall_bin())
        .args(["clock", "--rate", "100", "--", "sh", "-c", "echo \"$SQUALL_CLOCK_FRAME\"; exit 7"])
        .output()
        .expect("squall clock runs");
    let frame = String::from_utf8_lossy(&said.stdout).trim().to_owned();
    require(said.status.code() == Some(7), &format!("exit {:?}", said.status.code()));
    require(!frame.is_empty() && !std::path::Path::new(&frame).exists(), &format!("the frame {frame} is gone"));
    let killed = Command::new(squall_bin()).args(["clock", "--", "sh", "-c", "kill -TERM $$"]).status().expect("runs");
    require(killed.code() == Some(128 + 15), &format!("a command ended by SIGTERM: {killed:?}"));
    let usage = Command::new(squall_bin()).args(["clock", "--rate", "0", "--", "true"]).output().expect("runs");
    let text = String::from_utf8_lossy(&usage.stderr);
    require(usage.status.code() == Some(2) && text.contains("a rate is a number above 0"), &text);
}
