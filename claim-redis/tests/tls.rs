//! TLS connections: a private CA trusted through `tls.ca_file`, a client certificate where the server requires one, and clear refusals (wrong CA, missing client certificate).

mod common;

use claim_core::store::StoreConfig;
use claim_redis::testing::TlsServer;
use claim_redis::{ConnectError, RedisStore, RedisStoreOptions, TlsOptions};
use std::time::Duration;

fn tls_server(require_client_cert: bool) -> Option<TlsServer> {
    if common::redis_server_missing() {
        return None;
    }
    Some(TlsServer::start(require_client_cert).expect("start a TLS redis-server"))
}

fn options(server: &TlsServer, tls: TlsOptions) -> RedisStoreOptions {
    RedisStoreOptions {
        key_prefix: claim_redis::testing::random_prefix(),
        call_timeout: Duration::from_secs(3),
        tls,
        ..RedisStoreOptions::new(server.url(), StoreConfig::default())
    }
}

/// Options trusting the CA at `ca_file`, with no client certificate.
fn trusting(ca_file: std::path::PathBuf) -> TlsOptions {
    TlsOptions {
        ca_file: Some(ca_file),
        ..TlsOptions::default()
    }
}

/// How connecting to `server` with `tls` is refused.
async fn refused(server: &TlsServer, tls: TlsOptions, why: &str) -> ConnectError {
    RedisStore::connect(options(server, tls))
        .await
        .expect_err(why)
}

#[tokio::test]
async fn a_store_reaches_a_tls_server_through_a_private_ca_and_runs_the_protocol() {
    let Some(server) = tls_server(false) else {
        return;
    };
    let tls = trusting(server.ca_file());
    common::round::connected(options(&server, tls), "a", "over TLS").await;
}

#[tokio::test]
async fn a_server_that_requires_client_certificates_accepts_ours_and_refuses_none() {
    let Some(server) = tls_server(true) else {
        return;
    };
    let with_cert = TlsOptions {
        ca_file: Some(server.ca_file()),
        client_cert: Some(server.client_cert()),
        client_key: Some(server.client_key()),
    };
    common::round::connected(options(&server, with_cert), "a", "over mutual TLS").await;

    let without = trusting(server.ca_file());
    let text = refused(&server, without, "no client certificate")
        .await
        .to_string();
    assert!(text.contains(&server.url()), "{text}");
}

#[tokio::test]
async fn trusting_the_wrong_ca_is_refused_with_a_handshake_error_naming_the_ca_file() {
    let Some(server) = tls_server(false) else {
        return;
    };
    let tls = trusting(server.other_ca_file());
    let err = refused(&server, tls, "a server certificate our CA did not sign").await;
    assert!(matches!(err, ConnectError::Handshake { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("tls.ca_file") && text.contains(&server.url()),
        "{text}"
    );
}

#[tokio::test]
async fn tls_files_on_a_plain_url_are_refused_before_connecting() {
    let options = RedisStoreOptions {
        tls: trusting("/nonexistent/ca.pem".into()),
        ..RedisStoreOptions::new("redis://127.0.0.1:1", StoreConfig::default())
    };
    let err = RedisStore::connect(options).await.expect_err("plain URL");
    assert!(err.to_string().contains("rediss://"), "{err}");
}
