//! squall's image (scripts/build-image.sh) under podman, as a team's test suite meets it: built
//! from the tests' own binary into an OCI archive and loaded from it, run as a non-root user,
//! healthy by `squall health` with no shell in the image, serving the scenarios of a mounted
//! folder; and the Python and Node Testcontainers modules each start it, reach a run through the
//! mapped port, and judge a case in it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::kit::command::{squall_bin, text};
use crate::kit::harness::require;
use crate::kit::sdks::{examples_js, python};
use crate::kit::suites::root;

/// What podman needs on this kind of machine: runc (crun refuses hybrid cgroups), open-file and
/// process limits root may set (podman's defaults are above them).
const CONTAINERS_CONF: &str = r#"[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
"#;

/// A podman of the test's own: its storage, run directory and Docker-compatible socket under
/// one directory, stopped with the test.
struct Podman {
    dir: PathBuf,
    service: Option<Child>,
}

impl Podman {
    fn new(dir: &Path) -> Podman {
        std::fs::create_dir_all(dir).expect("podman's directory");
        std::fs::write(dir.join("containers.conf"), CONTAINERS_CONF).expect("containers.conf");
        Podman { dir: dir.to_owned(), service: None }
    }

    fn command(&self) -> Command {
        let mut podman = Command::new("podman");
        podman
            .arg("--root")
            .arg(self.dir.join("storage"))
            .arg("--runroot")
            .arg(self.dir.join("run"))
            .args(["--storage-driver", "vfs"])
            .env("CONTAINERS_CONF", self.dir.join("containers.conf"));
        podman
    }

    fn run(&self, args: &[&str]) -> String {
        let output = self.command().args(args).output().expect("podman runs");
        require(output.status.success(), &format!("podman {}: {}", args.join(" "), text(&output)));
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// `podman system service` on a socket, once it answers: `DOCKER_HOST` for Testcontainers.
    fn serve(&mut self) -> String {
        let socket = self.dir.join("podman.sock");
        let _ = std::fs::remove_file(&socket);
        let url = format!("unix://{}", socket.display());
        let child = self.command().args(["system", "service", "--time=0", &url]).stderr(Stdio::null()).spawn();
        self.service = Some(child.expect("podman system service starts"));
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            require(Instant::now() < deadline, "podman's socket answers within 20 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        url
    }
}

impl Drop for Podman {
    fn drop(&mut self) {
        if let Some(mut service) = self.service.take() {
            let _ = service.kill();
            let _ = service.wait();
        }
        let _ = self.command().args(["rm", "--all", "--force"]).output();
    }
}

/// What a Testcontainers library needs to reach podman here: its socket; no Ryuk (it would be
/// pulled from a registry); and the host's ports, not a bridge, since `/.dockerenv` on this
/// machine reads as Docker-in-Docker.
fn testcontainers_env(command: &mut Command, docker_host: &str) {
    command
        .env("DOCKER_HOST", docker_host)
        .env("TESTCONTAINERS_RYUK_DISABLED", "true")
        .env("TESTCONTAINERS_CONNECTION_MODE", "docker_host");
}

#[test]
#[ignore = "needs podman and the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
fn the_image_runs_as_non_root_is_healthy_and_each_testcontainers_module_judges_a_case_in_it() {
    let work = tempfile::tempdir().expect("tempdir");
    let build = Command::new(root().join("scripts/build-image.sh"))
        .args(["--binary", squall_bin(), "--out"])
        .arg(work.path())
        .env("PODMAN_ROOT", work.path().join("build"))
        .output()
        .expect("build-image.sh runs");
    require(build.status.success(), &format!("the image builds: {}", text(&build)));
    let archive = String::from_utf8_lossy(&build.stdout).trim().to_owned();
    require(archive.ends_with("-oci.tar"), &format!("an OCI archive: {archive}"));

    // Loaded from the archive into a storage that never saw the build, as a user's would be.
    let mut podman = Podman::new(&work.path().join("podman"));
    let loaded = podman.run(&["load", "--quiet", "--input", &archive]);
    let version = env!("CARGO_PKG_VERSION");
    require(loaded.contains(&format!("squall:{version}")), &format!("loaded as squall:{version}: {loaded}"));

    // The OCI format has no health check: it is given at run time, in exec form (no shell).
    // Scenarios come from a mounted folder, readable by the image's user as a user's would be.
    let scenarios = work.path().join("scenarios");
    std::fs::create_dir(&scenarios).expect("a scenarios folder");
    let scenario = "name = \"mounted-only\"\n\n[[attempts]]\nstream = { text = \"from the mount\" }\n";
    std::fs::write(scenarios.join("mounted-only.toml"), scenario).expect("a scenario");
    for (path, mode) in
        [(work.path().to_owned(), 0o755), (scenarios.clone(), 0o755), (scenarios.join("mounted-only.toml"), 0o644)]
    {
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(mode)).expect("readable");
    }
    let mount = format!("{}:/squall/scenarios:ro", scenarios.display());
    let image = format!("squall:{version}");
    let health = r#"["/usr/local/bin/squall", "health"]"#;
    let id = podman.run(&[
        "run",
        "--detach",
        "--publish",
        "127.0.0.1::8080",
        "--volume",
        &mount,
        "--health-cmd",
        health,
        &image,
    ]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !podman.command().args(["healthcheck", "run", &id]).status().is_ok_and(|s| s.success()) {
        let logs = podman.command().args(["logs", &id]).output().map(|o| text(&o)).unwrap_or_default();
        require(Instant::now() < deadline, &format!("healthy within 20 s; its logs:\n{logs}"));
        std::thread::sleep(Duration::from_millis(100));
    }
    let pid = podman.run(&["inspect", "--format", "{{.State.Pid}}", &id]);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the server's process status");
    let uid = status.lines().find(|l| l.starts_with("Uid:")).unwrap_or_default().to_owned();
    require(uid.split_whitespace().skip(1).all(|id| id == "65532"), &format!("squall runs as 65532: {uid}"));
    let port = podman.run(&["port", &id, "8080/tcp"]);
    let listed = tokio::runtime::Runtime::new().expect("a runtime").block_on(async {
        let reply = reqwest::get(format!("http://{port}/__squall/scenarios")).await.expect("answered");
        reply.json::<serde_json::Value>().await.expect("JSON")
    });
    let names: Vec<&str> =
        listed["scenarios"].as_array().into_iter().flatten().filter_map(|s| s["name"].as_str()).collect();
    require(names == ["mounted-only"], &format!("the mounted scenarios are served: {listed}"));
    podman.run(&["rm", "--force", &id]);

    let docker_host = podman.serve();
    let examples = root().join("integrations/python/examples");
    let mut pytest = Command::new(python());
    pytest.args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir"]).arg(&examples);
    pytest.arg(examples.join("test_container.py")).current_dir(work.path());
    testcontainers_env(&mut pytest, &docker_host);
    let output = pytest.output().expect("pytest runs");
    require(output.status.success() && text(&output).contains("1 passed"), &format!("pytest: {}", text(&output)));

    // --preserve-symlinks: squall-judge is linked from the examples' node_modules, and its
    // module finds testcontainers where an installed package would, beside it.
    let mut node = Command::new("node");
    node.args(["--preserve-symlinks", "--test", "container.test.mjs"]).current_dir(examples_js());
    testcontainers_env(&mut node, &docker_host);
    let output = node.output().expect("node runs");
    require(output.status.success() && text(&output).contains("# pass 2"), &format!("node --test: {}", text(&output)));
}
