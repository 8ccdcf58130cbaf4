//! Digests the judge and the reports both take: the SHA-256 of bytes, in lowercase hex (a case's
//! scenario as run; a report file, a feature, a key in an attestation).

use sha2::{Digest as _, Sha256};

/// The SHA-256 of `bytes`, in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}
