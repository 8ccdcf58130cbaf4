//! Embeds the scenario catalogue (`scenarios/*.toml`) so `squall serve` works from anywhere.

include!("crates/embed_files.rs");

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    embed_dir("EMBEDDED_SCENARIOS", &root.join("scenarios"), "toml", "embedded_scenarios.rs");
}
