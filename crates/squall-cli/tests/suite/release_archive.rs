//! The release archive `cargo binstall squall-cli` downloads: `scripts/release-archive.sh` packs
//! an executable where `[package.metadata.binstall]` (crates/squall-cli/Cargo.toml) says the
//! archive holds it, under the name its `pkg-url` gives; unpacked, it is squall of this version.

use std::path::PathBuf;
use std::process::Command;

use crate::kit::command::squall_bin;
use crate::kit::command::text;
use crate::kit::harness::require;
use crate::kit::suites::root;

/// A binstall template with cargo-binstall's variables filled in.
fn render(template: &str, target: &str) -> String {
    template
        .replace("{ repo }", "REPO")
        .replace("{ version }", env!("CARGO_PKG_VERSION"))
        .replace("{ target }", target)
        .replace("{ bin }", "squall")
        .replace("{ binary-ext }", "")
}

#[test]
fn the_release_archive_holds_squall_where_binstall_looks() {
    let manifest = std::fs::read_to_string(root().join("crates/squall-cli/Cargo.toml")).expect("the manifest");
    let manifest: toml::Value = toml::from_str(&manifest).expect("TOML");
    let binstall = &manifest["package"]["metadata"]["binstall"];
    require(binstall["pkg-fmt"].as_str() == Some("tgz"), &format!("{binstall:?}"));

    let host = String::from_utf8(Command::new("rustc").arg("-vV").output().expect("rustc runs").stdout).expect("UTF-8");
    let target = host.lines().find_map(|l| l.strip_prefix("host: ")).expect("the host triple").to_owned();
    let out = tempfile::tempdir().expect("tempdir");
    let made = Command::new(root().join("scripts/release-archive.sh"))
        .args(["--binary", squall_bin(), "--out"])
        .arg(out.path())
        .output();
    let made = made.expect("release-archive.sh runs");
    require(made.status.success(), &text(&made));
    let archive = PathBuf::from(String::from_utf8_lossy(&made.stdout).trim());

    let url = render(binstall["pkg-url"].as_str().expect("pkg-url"), &target);
    let file_name = archive.file_name().and_then(|n| n.to_str()).expect("a name");
    require(url.ends_with(&format!("/{file_name}")), &format!("pkg-url {url}, archive {file_name}"));

    let unpacked = tempfile::tempdir().expect("tempdir");
    let untar = Command::new("tar").arg("-xzf").arg(&archive).arg("-C").arg(unpacked.path()).output();
    require(untar.expect("tar runs").status.success(), "tar -xzf");
    let bin_dir = render(binstall["bin-dir"].as_str().expect("bin-dir"), &target);
    let executable = unpacked.path().join(&bin_dir);
    let version = Command::new(&executable).arg("--version").output();
    let version = version.unwrap_or_else(|e| panic!("{} (bin-dir {bin_dir}): {e}", executable.display()));
    let said = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    require(said == format!("squall {}", env!("CARGO_PKG_VERSION")), &said);
}
