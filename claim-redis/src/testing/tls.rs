//! A private TLS-only `redis-server` for tests: a CA, a server certificate (127.0.0.1, localhost) and a client certificate generated in the test with rcgen, plus an unrelated CA for refusal tests.

use super::process::{Process, Ready, os};
use super::random_u64;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use std::path::{Path, PathBuf};

/// A `redis-server --port 0 --tls-port <port>` with its certificates.
#[derive(Debug)]
pub struct TlsServer {
    process: Process,
    dir: PathBuf,
}

impl TlsServer {
    /// Generates the certificates and starts the server; with
    /// `require_client_cert` it refuses clients without a certificate its
    /// CA signed (`tls-auth-clients yes`).
    pub fn start(require_client_cert: bool) -> std::io::Result<TlsServer> {
        let dir = std::env::temp_dir().join(format!("claim-redis-tls-{:016x}", random_u64()));
        std::fs::create_dir_all(&dir)?;
        write_certificates(&dir).map_err(|e| std::io::Error::other(format!("rcgen: {e}")))?;
        let ready = Ready::LogLine("Ready to accept connections");
        let started = Process::spawn_on_free_port(&dir, ready, |port| {
            Ok(vec![
                os("--port"),
                os("0"),
                os("--tls-port"),
                os(port.to_string()),
                os("--tls-cert-file"),
                dir.join("server.pem").into_os_string(),
                os("--tls-key-file"),
                dir.join("server.key").into_os_string(),
                os("--tls-ca-cert-file"),
                dir.join("ca.pem").into_os_string(),
                os("--tls-auth-clients"),
                os(if require_client_cert { "yes" } else { "no" }),
            ])
        });
        match started {
            Ok(process) => Ok(TlsServer { process, dir }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }

    /// `rediss://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("rediss://127.0.0.1:{}", self.process.port)
    }

    pub fn port(&self) -> u16 {
        self.process.port
    }

    /// The CA that signed the server and client certificates (PEM).
    pub fn ca_file(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// A CA that signed nothing here: trusting only it must fail.
    pub fn other_ca_file(&self) -> PathBuf {
        self.dir.join("other-ca.pem")
    }

    /// A client certificate the server's CA signed (PEM).
    pub fn client_cert(&self) -> PathBuf {
        self.dir.join("client.pem")
    }

    /// The client certificate's private key (PEM, PKCS#8).
    pub fn client_key(&self) -> PathBuf {
        self.dir.join("client.key")
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.process.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn ca(name: &str) -> Result<CertifiedIssuer<'static, KeyPair>, rcgen::Error> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    CertifiedIssuer::self_signed(params, KeyPair::generate()?)
}

fn leaf(
    dir: &Path,
    name: &str,
    sans: Vec<String>,
    usage: ExtendedKeyUsagePurpose,
    issuer: &CertifiedIssuer<'static, KeyPair>,
) -> Result<(), rcgen::Error> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(sans)?;
    params.distinguished_name.push(DnType::CommonName, name);
    params.extended_key_usages = vec![usage];
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let cert = params.signed_by(&key, issuer)?;
    let write = |file: &str, text: String| {
        std::fs::write(dir.join(file), text).map_err(|e| rcgen::Error::PemError(e.to_string()))
    };
    write(&format!("{name}.pem"), cert.pem())?;
    write(&format!("{name}.key"), key.serialize_pem())?;
    Ok(())
}

fn write_certificates(dir: &Path) -> Result<(), rcgen::Error> {
    let ca = ca("claim-redis test CA")?;
    let other = ca_other()?;
    let write = |file: &str, text: String| {
        std::fs::write(dir.join(file), text).map_err(|e| rcgen::Error::PemError(e.to_string()))
    };
    write("ca.pem", ca.pem())?;
    write("other-ca.pem", other)?;
    leaf(
        dir,
        "server",
        vec!["127.0.0.1".into(), "localhost".into()],
        ExtendedKeyUsagePurpose::ServerAuth,
        &ca,
    )?;
    leaf(
        dir,
        "client",
        vec!["client.test".into()],
        ExtendedKeyUsagePurpose::ClientAuth,
        &ca,
    )
}

fn ca_other() -> Result<String, rcgen::Error> {
    Ok(ca("an unrelated CA")?.pem())
}
