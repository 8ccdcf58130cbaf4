//! Files squall embeds and hands to an implementation's processes by path (the clock's preload,
//! the warm launcher), kept in squall's cache under a name that carries their digest: written
//! once, atomically, shared by every run of the same build and never stale after an upgrade.

use std::path::PathBuf;

use sha2::{Digest as _, Sha256};

/// `bytes` as `{stem}-{digest}.{extension}` in squall's cache (`$XDG_CACHE_HOME/squall`,
/// `~/.cache/squall`, else the temporary directory).
pub(crate) fn cached_file(stem: &str, extension: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("squall");
    std::fs::create_dir_all(&cache)?;
    let digest = Sha256::digest(bytes);
    let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let path = cache.join(format!("{stem}-{name}.{extension}"));
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64) {
        return Ok(path);
    }
    let mut file = tempfile::NamedTempFile::new_in(&cache)?;
    std::io::Write::write_all(&mut file, bytes)?;
    file.persist(&path).map_err(|e| e.error)?;
    Ok(path)
}
