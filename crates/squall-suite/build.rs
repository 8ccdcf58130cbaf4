//! Embeds the features (`features/*.feature`; `features` here links to the repository's, so the
//! packaged crate carries them) so `squall run` works from anywhere, and records the git commit
//! squall is built from, and the compiler, for reports' provenance (`SQUALL_GIT_COMMIT`, none
//! outside a checkout; `SQUALL_RUSTC`), and builds the clock preload (`clock/*.c`), embedded as
//! bytes (none, and the sped-up clock unavailable, where no C compiler is found).

include!("embed_files.rs");

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    embed_dir("EMBEDDED_FEATURES", &root.join("features"), "feature", "embedded_features.rs");
    record_commit(&root);
    build_clock_preload(&root);
}

/// `$OUT_DIR/libsquall_clock.so` from `clock/*.c`, the clock's preload, and
/// `SQUALL_CLOCK_PRELOAD`, the file `include_bytes!` reads: the library, or an empty file where
/// it cannot be built (the cargo warning says why). It is a shared object handed to other
/// processes, never linked into squall: the `cc` crate finds the compiler for the target (`CC`,
/// `CC_<target>`, a cross compiler), and the compiler links the object itself.
fn build_clock_preload(root: &std::path::Path) {
    let dir = root.join("clock");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    sources.retain(|path| path.extension().is_some_and(|ext| ext == "c"));
    sources.sort();
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
    let library = out_dir.join("libsquall_clock.so");
    let target = |key: &str| std::env::var(format!("CARGO_CFG_TARGET_{key}")).unwrap_or_default();
    let why_not = if target("OS") != "linux" {
        Some("the clock preload is for Linux (LD_PRELOAD)".to_owned())
    } else {
        compile_preload(&sources, &dir, &library, &target("ARCH")).err()
    };
    if let Some(why) = why_not {
        println!("cargo:warning=the clock preload was not built: {why}; `squall run --clock accelerated` will say so");
        if let Err(e) = std::fs::write(&library, b"") {
            panic!("cannot write {}: {e}", library.display());
        }
    }
    println!("cargo:rustc-env=SQUALL_CLOCK_PRELOAD={}", library.display());
}

fn compile_preload(
    sources: &[PathBuf],
    dir: &std::path::Path,
    library: &std::path::Path,
    arch: &str,
) -> Result<(), String> {
    let compiler = cc::Build::new().cargo_metadata(false).opt_level(2).try_get_compiler().map_err(|e| e.to_string())?;
    let mut command = compiler.to_command();
    command.args(["-shared", "-fPIC", "-Wall", "-Wextra", "-o"]).arg(library).args(sources);
    if arch == "x86_64" {
        // pthread_cond_timedwait in both of glibc's versions there.
        command.arg(format!("-Wl,--version-script={}", dir.join("versions.map").display()));
    }
    command.arg("-ldl");
    let output = command.output().map_err(|e| format!("cannot run {}: {e}", compiler.path().display()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("{} failed: {}", compiler.path().display(), String::from_utf8_lossy(&output.stderr).trim()))
    }
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
