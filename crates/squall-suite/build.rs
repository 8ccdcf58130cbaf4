//! Embeds the features (`features/*.feature`; `features` here links to the repository's, so the
//! packaged crate carries them) so `squall run` works from anywhere, and records the git commit
//! squall is built from, and the compiler, for reports' provenance (`SQUALL_GIT_COMMIT`, none
//! outside a checkout; `SQUALL_RUSTC`).

include!("embed_files.rs");

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    embed_dir("EMBEDDED_FEATURES", &root.join("features"), "feature", "embedded_features.rs");
    record_commit(&root);
}

/// `SQUALL_GIT_COMMIT` for the crate: given in the environment, or asked of git; rebuilt when
/// the checkout moves to another commit.
fn record_commit(root: &std::path::Path) {
    println!("cargo:rerun-if-env-changed=SQUALL_GIT_COMMIT");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").args(args).current_dir(root).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let commit = std::env::var("SQUALL_GIT_COMMIT").ok().or_else(|| git(&["rev-parse", "HEAD"])).unwrap_or_default();
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let dir = PathBuf::from(dir);
        let reference = git(&["symbolic-ref", "-q", "HEAD"]).unwrap_or_default();
        // Only files that exist: cargo reruns a build script whose watched file is missing.
        for file in [dir.join("HEAD"), dir.join(reference), dir.join("packed-refs")] {
            if file.is_file() {
                println!("cargo:rerun-if-changed={}", file.display());
            }
        }
    }
    println!("cargo:rustc-env=SQUALL_GIT_COMMIT={commit}");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = std::process::Command::new(rustc).arg("--version").output().ok();
    let version = version.map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned()).unwrap_or_default();
    println!("cargo:rustc-env=SQUALL_RUSTC={version}");
}
