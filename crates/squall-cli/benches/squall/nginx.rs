//! nginx as the reverse proxy teams already run, beside squall's proxy in `-- --proxy`: one
//! process (`master_process off`, one worker's work), `proxy_buffering off`, HTTP/1.1 keep-alive
//! connections to the upstream. Used when `nginx` is on the PATH
//! (`scripts/proxy-vs-nginx.sh` installs it from the distribution's packages; CI does not).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running nginx forwarding everything to one upstream; killed when dropped.
pub(super) struct Nginx {
    pub(super) child: Child,
    /// Its origin, `http://127.0.0.1:PORT`.
    pub(super) origin: String,
    _dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The nginx on the PATH, if there is one (`/usr/sbin` too: Debian puts it there).
fn nginx_binary() -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path.split(':').chain(["/usr/sbin"]).map(|dir| PathBuf::from(dir).join("nginx")).find(|p| p.is_file());
    found
}

/// nginx proxying to `upstream` (`host:port`), or `None` when nginx is not installed.
pub(super) fn start(upstream: &str) -> Option<Nginx> {
    let binary = nginx_binary()?;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let port = TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("its address").port();
    let root = dir.path().display().to_string();
    let config = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\nerror_log {root}/error.log;\npid {root}/nginx.pid;\n\
         events {{ worker_connections 4096; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {root}/body;\n  proxy_temp_path {root}/proxy;\n\
           fastcgi_temp_path {root}/fastcgi;\n  uwsgi_temp_path {root}/uwsgi;\n  scgi_temp_path {root}/scgi;\n\
           upstream squall {{ server {upstream}; keepalive 32; }}\n\
           server {{\n    listen 127.0.0.1:{port};\n    location / {{\n      proxy_pass http://squall;\n\
               proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n      proxy_buffering off;\n    }}\n  }}\n}}\n"
    );
    let conf = dir.path().join("nginx.conf");
    std::fs::write(&conf, config).expect("the config is written");
    let child = Command::new(binary)
        .arg("-c")
        .arg(&conf)
        .arg("-p")
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nginx starts");
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(10), "nginx did not listen: {root}/error.log");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(Nginx { child, origin: format!("http://127.0.0.1:{port}"), _dir: dir })
}
