//! Embeds the features (`features/*.feature`; `features` here links to the repository's, so the
//! packaged crate carries them) so `squall run` works from anywhere.

include!("embed_files.rs");

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    embed_dir("EMBEDDED_FEATURES", &root.join("features"), "feature", "embedded_features.rs");
}
