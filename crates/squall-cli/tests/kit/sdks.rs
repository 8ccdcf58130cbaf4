//! Where scripts/setup-sdks.sh installed the real clients the tests drive. Without them a test
//! fails and says how to install them: a skipped conformance check would be a check that cannot
//! fail.

use std::path::PathBuf;

/// Where scripts/setup-sdks.sh installed the SDKs (`SQUALL_SDK_DIR`, else target/sdk).
pub(crate) fn sdk_dir() -> PathBuf {
    std::env::var_os("SQUALL_SDK_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::kit::suites::root().to_path_buf().join("target/sdk"))
}

/// The JavaScript examples (`integrations/js/examples`), their packages installed.
pub(crate) fn examples_js() -> PathBuf {
    let dir = crate::kit::suites::root().join("integrations/js/examples");
    assert!(dir.join("node_modules/vitest").exists(), "run `scripts/setup-sdks.sh` (the README's test command does)");
    dir
}

/// The SDK venv's Python, with the SDKs and the squall wheel installed.
pub(crate) fn python() -> PathBuf {
    let python = sdk_dir().join("python/bin/python");
    assert!(
        python.exists(),
        "{} is missing: install the SDKs with `scripts/setup-sdks.sh` (the README's test command does)",
        python.display()
    );
    python
}
