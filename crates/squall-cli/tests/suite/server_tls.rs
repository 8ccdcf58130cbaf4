//! squall over TLS (`--tls`): HTTP/2 or HTTP/1.1 chosen by ALPN on one port, every API to curl
//! trusting the generated test CA; under TLS a fault still acts where it does in the clear (a
//! `reset` a TCP RST under HTTP/1.1, RST_STREAM under HTTP/2); a client that does not trust the
//! CA is refused at the handshake while others are served; a certificate given as PEM files
//! serves, and a file that cannot serve is named; `squall serve --tls` writes the CA it prints.

use std::path::{Path, PathBuf};

use squall::embedded::{MockProvider, ScriptedRun};
use squall::journal::{EndKind, Protocol};
use squall::scenario::Catalogue;
use squall::server::tls::ServerTls;
use squall::server::ServerConfig;

use crate::kit::command::{serve, squall};
use squall_testkit::calls::{every_api_call, responses_request, run_of};

/// A provider serving over `tls`, and the generated CA's file (in `dir`) clients trust.
async fn provider_over(tls: ServerTls, dir: &Path) -> (MockProvider, PathBuf) {
    let ca = dir.join("ca.pem");
    if tls.ca_pem().is_some() {
        tls.write_ca(&ca).expect("the CA written");
    }
    let mut config = ServerConfig::loopback(Catalogue::default());
    config.tls = Some(tls);
    (MockProvider::start_with(config).await, ca)
}

/// curl with `args` (on tokio's side: the server serves on this test's thread): its exit code,
/// output and error output.
async fn curl(args: &[&str]) -> (Option<i32>, String, String) {
    let out = tokio::process::Command::new("curl").args(["-sS", "-N"]).args(args).output().await.expect("curl runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// curl POSTing `body` as JSON to `url`, trusting `ca`, over `http` (`--http2`, `--http1.1`).
async fn post(ca: &Path, http: &str, url: &str, body: &serde_json::Value) -> (Option<i32>, String, String) {
    let ca = ca.display().to_string();
    let body = body.to_string();
    let args = ["--cacert", &ca, http, "-w", "\n%{http_version} %{response_code}", "-X", "POST", url];
    curl(&[&args[..], &["-H", "content-type: application/json", "-d", &body]].concat()).await
}

#[tokio::test]
async fn every_api_streams_over_tls_as_http2_or_http1_by_alpn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (provider, ca) = provider_over(ServerTls::generated().expect("a test certificate"), dir.path()).await;
    assert!(provider.server().origin().starts_with("https://127.0.0.1:"), "{}", provider.server().origin());
    let run = run_of(&provider, "name = \"t\"\n[[attempts]]\nstream = { text = \"over two\" }\n");
    for (http, version) in [("--http2", "2"), ("--http1.1", "1.1")] {
        for (api, url, body, ending) in every_api_call(&run) {
            let (code, out, err) = post(&ca, http, &url, &body).await;
            assert_eq!(code, Some(0), "{api} {http}: {err}");
            assert!(out.ends_with(&format!("\n{version} 200")), "{api} {http}: {out}");
            assert!(out.contains(ending), "{api} {http}: the stream is incomplete: {out}");
        }
    }
    let protocols: Vec<Protocol> = run.journal().iter().map(|e| e.protocol).collect();
    assert_eq!(protocols, [[Protocol::Http2; 6], [Protocol::Http1; 6]].concat());
}

/// Under TLS a `reset` over HTTP/1.1 still resets the TCP connection below (curl: "Connection
/// reset by peer", 56), over HTTP/2 it resets the stream (92, the code named); an `eof` leaves
/// the body incomplete — each after exactly the scripted events.
#[tokio::test]
async fn faults_under_tls_act_as_they_do_in_the_clear() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (provider, ca) = provider_over(ServerTls::generated().expect("a test certificate"), dir.path()).await;
    let fault = |kind: &str| {
        format!("name = \"f\"\n[[attempts]]\nstream = {{ text = \"a b c d\" }}\nfault = {{ kind = \"{kind}\", after_events = 3 }}\n")
    };
    for (kind, http, exit, says, protocol) in [
        ("reset", "--http1.1", 56, "reset by peer", Protocol::Http1),
        ("reset", "--http2", 92, "INTERNAL_ERROR", Protocol::Http2),
        ("eof", "--http1.1", 18, "", Protocol::Http1),
    ] {
        let run = run_of(&provider, &fault(kind));
        let url = format!("{}/responses", run.base_url());
        let (code, out, err) = post(&ca, http, &url, &responses_request()).await;
        assert_eq!(code, Some(exit), "{kind} {http}: {err} {out}");
        assert!(err.contains(says), "{kind} {http}: {err}");
        assert_eq!(
            out.matches("\nevent: ").count() + usize::from(out.starts_with("event: ")),
            3,
            "{kind} {http}: {out}"
        );
        let entry = run.journal().remove(0);
        assert_eq!((entry.protocol, entry.events_sent), (protocol, 3), "{entry:?}");
        assert_eq!(entry.end, Some(if kind == "eof" { EndKind::Eof } else { EndKind::Reset }));
    }
}

/// A client that does not trust the CA is refused at the handshake (curl 60); nothing reaches
/// the journal, and the next client is served.
#[tokio::test]
async fn a_client_that_does_not_trust_the_ca_is_refused_and_the_next_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (provider, ca) = provider_over(ServerTls::generated().expect("a test certificate"), dir.path()).await;
    let run = run_of(&provider, "name = \"t\"\n[[attempts]]\n");
    let url = format!("{}/responses", run.base_url());
    let body = responses_request().to_string();
    let (code, _, err) = curl(&["-X", "POST", &url, "-H", "content-type: application/json", "-d", &body]).await;
    assert_eq!(code, Some(60), "{err}");
    assert!(run.journal().is_empty());
    let (code, out, err) = post(&ca, "--http2", &url, &responses_request()).await;
    assert_eq!(code, Some(0), "{err}");
    assert!(out.ends_with("\n2 200"), "{out}");
}

/// A certificate given as PEM files (the test fixtures', for `localhost`) serves; a missing
/// file, or a key file holding no key, is named in the error.
#[tokio::test]
async fn a_certificate_given_serves_and_a_file_that_cannot_is_named() {
    let fixtures = crate::kit::suites::root().join("tests/fixtures/tls");
    let (cert, key) = (fixtures.join("server.pem"), fixtures.join("server.key"));
    let tls = ServerTls::from_pem_files(&cert, &key).expect("the fixture certificate");
    assert!(tls.ca_pem().is_none(), "a certificate given has no CA of squall's");
    let dir = tempfile::tempdir().expect("tempdir");
    let (provider, _) = provider_over(tls, dir.path()).await;
    let run = run_of(&provider, "name = \"t\"\n[[attempts]]\n");
    let url = run.base_url().replace("127.0.0.1", "localhost");
    let (code, out, err) =
        post(&fixtures.join("ca.pem"), "--http2", &format!("{url}/responses"), &responses_request()).await;
    assert_eq!(code, Some(0), "{err}");
    assert!(out.ends_with("\n2 200"), "{out}");

    let missing = fixtures.join("no-such.pem");
    let error = ServerTls::from_pem_files(&missing, &key).expect_err("no such file").to_string();
    assert!(error.starts_with(&missing.display().to_string()), "{error}");
    let error = ServerTls::from_pem_files(&cert, &cert).expect_err("a certificate is no key").to_string();
    assert!(error.starts_with(&cert.display().to_string()) && error.contains("private key"), "{error}");
}

/// `squall serve --tls` writes the CA where asked before it prints its `https://` address,
/// and serves a client trusting it; `--tls-cert` without `--tls-key` is refused.
#[test]
fn squall_serve_tls_writes_the_ca_it_prints() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = dir.path().join("squall-ca.pem");
    let served = serve(&["--tls", "--tls-ca-out", &ca.display().to_string()]);
    let origin = served.origin.clone();
    let pem = std::fs::read_to_string(&ca).unwrap_or_default();
    let models = std::process::Command::new("curl")
        .args(["-sS", "--cacert"])
        .arg(&ca)
        .arg(format!("{origin}/scenarios/stall-then-ok/v1/models"))
        .output()
        .expect("curl runs");
    drop(served);
    assert!(origin.starts_with("https://127.0.0.1:"), "{origin}");
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
    assert!(models.status.success(), "{}", String::from_utf8_lossy(&models.stderr));
    let refused = squall().args(["serve", "--tls-cert", "x.pem"]).output().expect("squall runs");
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--tls-key"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

/// One run per HTTP/2 fault a checker reads, by the name the checkers use.
fn http2_fault_runs(provider: &MockProvider) -> Vec<(&'static str, ScriptedRun)> {
    let stream = "[[attempts]]\nstream = { text = \"a b c d\" }\n";
    let faults = [
        ("text", ""),
        ("reset", "fault = { kind = \"reset\", after_events = 3 }\n"),
        ("cancel", "fault = { kind = \"reset\", after_events = 3, h2_code = \"cancel\" }\n"),
        ("eof", "fault = { kind = \"eof\", after_events = 3 }\n"),
        ("goaway", "fault = { kind = \"goaway\", after_events = 2 }\n"),
        ("goaway_cut", "fault = { kind = \"goaway\", after_events = 2, h2_code = \"internal_error\" }\n"),
        ("closed", "fault = { kind = \"close\", after_events = 3 }\n"),
    ];
    let mut runs: Vec<(&str, ScriptedRun)> = faults
        .iter()
        .map(|(name, fault)| (*name, run_of(provider, &format!("name = \"{name}\"\n{stream}{fault}"))))
        .collect();
    runs.push(("refused", run_of(provider, "name = \"refused\"\n[[attempts]]\nfault = { kind = \"refuse\" }\n")));
    runs
}

/// Run `checker` with `program` on [`http2_fault_runs`] of `provider` (trusting `ca` when
/// given): it passes, and every request spoke HTTP/2.
async fn check_http2_faults(program: PathBuf, checker: &str, provider: &MockProvider, ca: Option<&Path>) {
    let runs = http2_fault_runs(provider);
    let urls: serde_json::Map<String, serde_json::Value> =
        runs.iter().map(|(name, run)| ((*name).to_owned(), run.base_url().into())).collect();
    let mut command = tokio::process::Command::new(program);
    command.arg(crate::kit::suites::root().join("crates/squall-cli/tests/sdk").join(checker));
    command.env("SQUALL_RUNS", serde_json::Value::Object(urls).to_string());
    if let Some(ca) = ca {
        command.env("SQUALL_CA_FILE", ca);
    }
    let output = command.output().await.expect("the checker runs");
    let report = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{checker} read a fault otherwise:\n{report}");
    assert!(runs.iter().all(|(_, run)| run.journal().iter().all(|e| e.protocol == Protocol::Http2)), "{report}");
}

/// httpx with `http2=True` (h2 under httpcore), trusting the CA through `SQUALL_CA_FILE`, reads
/// each HTTP/2 fault as `crates/squall-cli/tests/sdk/python/parse_httpx_h2.py` says.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn httpx_over_tls_reads_each_http2_fault() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (provider, ca) = provider_over(ServerTls::generated().expect("a test certificate"), dir.path()).await;
    check_http2_faults(crate::kit::sdks::python(), "python/parse_httpx_h2.py", &provider, Some(&ca)).await;
}

/// Node's own `http2` module reads each HTTP/2 fault as `crates/squall-cli/tests/sdk/node/parse_node_http2.mjs`
/// says, over h2c and over TLS alike.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs the Node scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
async fn node_http2_reads_each_http2_fault_over_h2c_and_tls() {
    let plain = MockProvider::start().await;
    check_http2_faults("node".into(), "node/parse_node_http2.mjs", &plain, None).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let (over_tls, ca) = provider_over(ServerTls::generated().expect("a test certificate"), dir.path()).await;
    check_http2_faults("node".into(), "node/parse_node_http2.mjs", &over_tls, Some(&ca)).await;
}
