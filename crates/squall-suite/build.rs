//! Embeds the features (`features/*.feature`; `features` here links to the repository's, so the
//! packaged crate carries them) so `squall run` works from anywhere, and records the git commit
//! squall is built from, and the compiler, for reports' provenance (`SQUALL_GIT_COMMIT`, none
//! outside a checkout; `SQUALL_RUSTC`), and builds the clock preload (`clock/squall_clock.c`)
//! that an implementation's process loads beside libfaketime, embedded as bytes (none, and the
//! sped-up clock unavailable, where no C compiler is found).

include!("embed_files.rs");

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    embed_dir("EMBEDDED_FEATURES", &root.join("features"), "feature", "embedded_features.rs");
    record_commit(&root);
    build_clock_preload(&root);
}

/// `$OUT_DIR/libsquall_clock.so` from `clock/squall_clock.c` with the C compiler (`$CC`, else
/// `cc`), and `SQUALL_CLOCK_PRELOAD`, the file `include_bytes!` reads: the library, or an empty
/// file where it cannot be built (the cargo warning says why).
fn build_clock_preload(root: &std::path::Path) {
    let source = root.join("clock/squall_clock.c");
    println!("cargo:rerun-if-changed={}", source.display());
    println!("cargo:rerun-if-env-changed=CC");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
    let library = out_dir.join("libsquall_clock.so");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let built = linux
        && std::process::Command::new(&compiler)
            .args(["-shared", "-fPIC", "-O2", "-Wall", "-o"])
            .arg(&library)
            .arg(&source)
            .arg("-ldl")
            .status()
            .is_ok_and(|status| status.success());
    if !built {
        println!("cargo:warning=the clock preload was not built (no Linux target or no C compiler `{compiler}`): `squall run --clock accelerated` will say so");
        if let Err(e) = std::fs::write(&library, b"") {
            panic!("cannot write {}: {e}", library.display());
        }
    }
    println!("cargo:rustc-env=SQUALL_CLOCK_PRELOAD={}", library.display());
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
