//! A report read back: a run's `report.json`, or a kept one compressed as `reports/` keeps them
//! (`report.json.gz`: the data, a twentieth of the size; `squall report render` writes every
//! format again from either).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::schema::Report;

/// The report file a path names: itself, or in a directory its `report.json`, else its
/// `report.json.gz`.
pub fn report_file(path: &Path) -> PathBuf {
    if !path.is_dir() {
        return path.to_owned();
    }
    let plain = path.join("report.json");
    let kept = path.join("report.json.gz");
    if !plain.exists() && kept.exists() {
        kept
    } else {
        plain
    }
}

/// The JSON text of a report file, decompressed when its name ends in `.gz`.
pub fn report_text(file: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(file)?;
    if file.extension().is_some_and(|e| e == "gz") {
        gunzip(&bytes)
    } else {
        String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }
}

/// gzip-compressed UTF-8 text, decompressed.
pub fn gunzip(bytes: &[u8]) -> std::io::Result<String> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes).read_to_string(&mut text)?;
    Ok(text)
}

/// The report a path names (see [`report_file`]), with the file it was read from; the error
/// names the file and says what is wrong with it.
pub fn read_report(path: &Path) -> Result<(PathBuf, Report), String> {
    let file = report_file(path);
    let text = report_text(&file).map_err(|e| format!("{}: cannot read the report: {e}", file.display()))?;
    let report = serde_json::from_str(&text).map_err(|e| format!("{}: not a squall report: {e}", file.display()))?;
    Ok((file, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_report_reads_from_its_directory_and_a_broken_one_is_named() {
        let (file, report) = read_report(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/reference"))
            .expect("the reference's kept report reads");
        assert!(file.ends_with("reports/reference/report.json.gz"), "{}", file.display());
        assert_eq!(report.iut.name, "reference");
        let dir = tempfile::tempdir().expect("a directory");
        let broken = dir.path().join("report.json.gz");
        std::fs::write(&broken, b"not gzip").expect("written");
        let error = read_report(dir.path()).expect_err("refused");
        assert!(error.starts_with(&broken.display().to_string()) && error.contains("cannot read"), "{error}");
    }
}
