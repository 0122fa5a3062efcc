//! TLS for `rediss://`: the PEM files of [`TlsOptions`] read and checked into redis-rs's certificates, each failure naming the field, the path and the fix.

use crate::options::{ConnectError, TlsOptions};
use redis::{ClientTlsConfig, TlsCertificates};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;

/// The certificates to hand redis-rs, or `None` for the system roots and
/// no client certificate.
pub(crate) fn certificates(
    tls: &TlsOptions,
    url_is_tls: bool,
) -> Result<Option<TlsCertificates>, ConnectError> {
    if tls.is_default() {
        return Ok(None);
    }
    if !url_is_tls {
        return Err(ConnectError::Option {
            option: "tls",
            reason: "a CA file or client certificate is set but the URL is not rediss://; use rediss:// to connect with TLS, or drop the TLS files".into(),
        });
    }
    let root_cert = match &tls.ca_file {
        Some(path) => Some(read_certs("tls.ca_file", path)?),
        None => None,
    };
    let client_tls = match (&tls.client_cert, &tls.client_key) {
        (Some(cert), Some(key)) => Some(ClientTlsConfig {
            client_cert: read_certs("tls.client_cert", cert)?,
            client_key: read_key(key)?,
        }),
        (None, None) => None,
        (Some(_), None) => return Err(missing_pair("tls.client_key", "tls.client_cert")),
        (None, Some(_)) => return Err(missing_pair("tls.client_cert", "tls.client_key")),
    };
    Ok(Some(TlsCertificates {
        client_tls,
        root_cert,
    }))
}

fn missing_pair(missing: &'static str, set: &str) -> ConnectError {
    ConnectError::Option {
        option: missing,
        reason: format!("is not set but {set} is: a client certificate needs both files"),
    }
}

fn read(field: &'static str, path: &Path) -> Result<Vec<u8>, ConnectError> {
    std::fs::read(path).map_err(|e| ConnectError::Tls {
        field,
        path: path.display().to_string(),
        reason: format!("{e}; give the path of a readable PEM file"),
    })
}

/// A PEM file holding at least one certificate.
fn read_certs(field: &'static str, path: &Path) -> Result<Vec<u8>, ConnectError> {
    let pem = read(field, path)?;
    let bad = |reason: String| ConnectError::Tls {
        field,
        path: path.display().to_string(),
        reason,
    };
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(format!("not a PEM certificate file: {e}")))?;
    if certs.is_empty() {
        return Err(bad(
            "holds no certificate (expected -----BEGIN CERTIFICATE-----)".into(),
        ));
    }
    Ok(pem)
}

/// A PEM file holding a private key (PKCS#8, PKCS#1 or SEC1).
fn read_key(path: &Path) -> Result<Vec<u8>, ConnectError> {
    let pem = read("tls.client_key", path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| ConnectError::Tls {
        field: "tls.client_key",
        path: path.display().to_string(),
        reason: format!("holds no private key in PEM: {e}"),
    })?;
    Ok(pem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn no_tls_files_means_system_roots() {
        assert!(
            certificates(&TlsOptions::default(), true)
                .unwrap()
                .is_none()
        );
        assert!(
            certificates(&TlsOptions::default(), false)
                .unwrap()
                .is_none()
        );
    }

    /// Options naming `path` as the CA file, nothing else.
    fn ca_file(path: impl Into<PathBuf>) -> TlsOptions {
        TlsOptions {
            ca_file: Some(path.into()),
            ..TlsOptions::default()
        }
    }

    /// Asserts `certificates(tls, rediss)` fails naming every one of `names`.
    fn refused_naming(tls: &TlsOptions, rediss: bool, names: &[&str]) {
        let err = certificates(tls, rediss).unwrap_err().to_string();
        for name in names {
            assert!(err.contains(name), "{name} in {err}");
        }
    }

    #[test]
    fn tls_files_with_a_plain_url_are_refused_naming_rediss() {
        refused_naming(&ca_file("/nonexistent/ca.pem"), false, &["rediss://"]);
    }

    #[test]
    fn a_missing_ca_file_is_refused_naming_the_field_and_path() {
        let names = ["tls.ca_file", "/nonexistent/ca.pem"];
        refused_naming(&ca_file("/nonexistent/ca.pem"), true, &names);
    }

    #[test]
    fn a_client_certificate_without_its_key_is_refused() {
        let tls = TlsOptions {
            client_cert: Some(PathBuf::from("/x/cert.pem")),
            ..TlsOptions::default()
        };
        refused_naming(&tls, true, &["tls.client_key"]);
    }

    #[test]
    fn a_file_without_a_certificate_is_refused() {
        let dir = std::env::temp_dir().join(format!("claim-redis-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("empty.pem");
        std::fs::write(&path, "not pem").unwrap();
        refused_naming(&ca_file(path), true, &["no certificate"]);
        let _ = std::fs::remove_dir_all(dir);
    }
}
