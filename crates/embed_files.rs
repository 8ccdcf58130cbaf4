// Shared by the build scripts of `squall` (the scenario catalogue) and `squall-suite` (the
// features): each includes this file and calls `embed_dir`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Write `$OUT_DIR/file` holding `embed`'s constant for `dir`.
fn embed_dir(name: &str, dir: &Path, ext: &str, file: &str) {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
    let mut out = String::new();
    embed(&mut out, name, dir, ext);
    let target = out_dir.join(file);
    if let Err(e) = std::fs::write(&target, out) {
        panic!("cannot write {}: {e}", target.display());
    }
}

/// Write `const NAME: &[(&str, &str)]` with every `*.EXT` file of `dir`: (file name, contents).
fn embed(out: &mut String, name: &str, dir: &Path, ext: &str) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == ext));
    files.sort();
    let _ = writeln!(
        out,
        "/// Files compiled into the binary from `{}`: (file name, contents).",
        dir.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
    );
    let _ = writeln!(out, "const {name}: &[(&str, &str)] = &[");
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let file_name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let _ = writeln!(out, "    ({file_name:?}, include_str!({:?})),", file.display().to_string());
    }
    out.push_str("];\n");
}
