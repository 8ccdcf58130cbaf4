//! DSSE envelopes (the in-toto signing envelope) signed with Ed25519 keys: a signature over
//! `PAE(payloadType, payload)`, keys as PKCS#8 / SPKI PEM files as `openssl genpkey -algorithm
//! ed25519` writes them, key ids the SHA-256 of the public key's DER.

use std::path::Path;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ed25519_dalek::pkcs8::{DecodePrivateKey as _, DecodePublicKey as _, EncodePrivateKey as _, EncodePublicKey as _};
use ed25519_dalek::{Signer as _, SigningKey, Verifier as _, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::provenance::sha256_hex;

/// The payload type of an in-toto Statement.
pub const IN_TOTO_PAYLOAD: &str = "application/vnd.in-toto+json";

/// A signed envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// Base64 of the payload's bytes.
    pub payload: String,
    /// What the payload is.
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    /// Its signatures.
    pub signatures: Vec<Signature>,
}

/// One signature of an envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signature {
    /// The signing key's id: the SHA-256 of its public key's DER, in hex.
    pub keyid: String,
    /// Base64 of the Ed25519 signature over the PAE.
    pub sig: String,
}

/// DSSE's pre-authentication encoding: `DSSEv1 <len type> <type> <len body> <body>`.
fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!("DSSEv1 {} {payload_type} {} ", payload_type.len(), payload.len()).into_bytes();
    out.extend_from_slice(payload);
    out
}

/// The id of a public key.
pub fn key_id(key: &VerifyingKey) -> String {
    key.to_public_key_der().map(|der| sha256_hex(der.as_bytes())).unwrap_or_default()
}

/// `payload` signed with `key` into an envelope.
pub fn sign(payload: &[u8], payload_type: &str, key: &SigningKey) -> Envelope {
    let sig = key.sign(&pae(payload_type, payload));
    Envelope {
        payload: STANDARD.encode(payload),
        payload_type: payload_type.to_owned(),
        signatures: vec![Signature { keyid: key_id(&key.verifying_key()), sig: STANDARD.encode(sig.to_bytes()) }],
    }
}

/// The payload of `envelope` when a signature by `key` verifies over it; else why not.
pub fn open(envelope: &Envelope, key: &VerifyingKey) -> Result<Vec<u8>, String> {
    let payload = STANDARD.decode(&envelope.payload).map_err(|e| format!("the payload is not base64: {e}"))?;
    let message = pae(&envelope.payload_type, &payload);
    let id = key_id(key);
    let mut tried = Vec::new();
    for signature in &envelope.signatures {
        let bytes = STANDARD.decode(&signature.sig).map_err(|e| format!("a signature is not base64: {e}"))?;
        let Ok(sig) = ed25519_dalek::Signature::from_slice(&bytes) else { continue };
        if key.verify(&message, &sig).is_ok() {
            return Ok(payload);
        }
        tried.push(signature.keyid.clone());
    }
    Err(format!(
        "no signature verifies with the public key given (key id {id}); the envelope's signatures are by {}",
        if tried.is_empty() { "no key".to_owned() } else { tried.join(", ") }
    ))
}

/// A new key pair: the private key's PKCS#8 PEM, the public key's SPKI PEM.
pub fn generate() -> Result<(String, String), String> {
    let mut seed = [0u8; 32];
    getrandom::getrandom(&mut seed).map_err(|e| format!("no randomness for a key: {e}"))?;
    let key = SigningKey::from_bytes(&seed);
    let private = key.to_pkcs8_pem(Default::default()).map_err(|e| e.to_string())?.to_string();
    let public = key.verifying_key().to_public_key_pem(Default::default()).map_err(|e| e.to_string())?;
    Ok((private, public))
}

/// The Ed25519 private key in a PKCS#8 PEM file.
pub fn read_private(path: &Path) -> Result<SigningKey, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read the key: {e}", path.display()))?;
    SigningKey::from_pkcs8_pem(&text)
        .map_err(|e| format!("{}: not an Ed25519 private key in PKCS#8 PEM: {e}", path.display()))
}

/// The Ed25519 public key in an SPKI PEM file.
pub fn read_public(path: &Path) -> Result<VerifyingKey, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read the key: {e}", path.display()))?;
    VerifyingKey::from_public_key_pem(&text)
        .map_err(|e| format!("{}: not an Ed25519 public key in SPKI PEM: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_opens_with_its_key_only_and_not_once_a_byte_changed() {
        let (private, public) = generate().expect("a key pair");
        let key = SigningKey::from_pkcs8_pem(&private).expect("reads");
        let public = VerifyingKey::from_public_key_pem(&public).expect("reads");
        let envelope = sign(b"{\"a\":1}", IN_TOTO_PAYLOAD, &key);
        assert_eq!(open(&envelope, &public).expect("verifies"), b"{\"a\":1}");
        let mut changed = envelope.clone();
        changed.payload = STANDARD.encode(b"{\"a\":2}");
        assert!(open(&changed, &public).is_err());
        let mut retyped = envelope.clone();
        retyped.payload_type = "text/plain".into();
        assert!(open(&retyped, &public).is_err(), "the type is signed too");
        let (_, other) = generate().expect("another pair");
        let error =
            open(&envelope, &VerifyingKey::from_public_key_pem(&other).expect("reads")).expect_err("not its key");
        assert!(error.contains(&envelope.signatures[0].keyid), "{error}");
    }

    #[test]
    fn the_pae_is_dsse_v1() {
        assert_eq!(pae("t", b"ab"), b"DSSEv1 1 t 2 ab");
    }
}
