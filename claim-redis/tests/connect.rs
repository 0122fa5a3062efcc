//! Connecting: ACL users and passwords, db indexes, and the durability check.

mod common;

use claim_core::ClaimProducer;
use claim_core::store::StoreConfig;
use claim_redis::testing::RedisServerOptions;
use claim_redis::{ConnectError, RedisStore, RedisStoreOptions, TimeSource};
use redis::AsyncCommands;

async fn add_user(url: &str, rules: &[&str]) {
    let mut raw = common::raw(url).await;
    let mut cmd = redis::cmd("ACL");
    cmd.arg("SETUSER").arg("worker").arg("on").arg(">s3cret");
    for rule in rules {
        cmd.arg(*rule);
    }
    let _: () = cmd.query_async(&mut raw).await.unwrap();
}

fn user_url(server_url: &str, password: &str, db: u8) -> String {
    server_url.replacen("redis://", &format!("redis://worker:{password}@"), 1) + &format!("/{db}")
}

#[tokio::test]
async fn an_acl_user_with_a_password_and_a_db_index_reaches_that_db() {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    add_user(&server.url(), &["~*", "+@all"]).await;
    let options = RedisStoreOptions {
        key_prefix: "db-test:".into(),
        ..RedisStoreOptions::new(user_url(&server.url(), "s3cret", 3), StoreConfig::default())
    };
    let store = RedisStore::connect(options)
        .await
        .expect("connect as the ACL user");
    let submission = common::submission("a", "t", 2_000_000_000);
    store.submit("q", &submission).await.unwrap();
    let mut raw = common::raw(&format!("{}/3", server.url())).await;
    let in_db3: usize = raw.zcard("db-test:q").await.unwrap();
    let mut raw0 = common::raw(&server.url()).await;
    let in_db0: usize = raw0.zcard("db-test:q").await.unwrap();
    assert_eq!((in_db3, in_db0), (1, 0), "keys land in the URL's db");
}

#[tokio::test]
async fn a_wrong_password_is_reported_naming_the_user_without_showing_the_password() {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    add_user(&server.url(), &["~*", "+@all"]).await;
    let options = RedisStoreOptions::new(
        user_url(&server.url(), "wrong-pw", 0),
        StoreConfig::default(),
    );
    let err = RedisStore::connect(options).await.unwrap_err();
    assert!(
        matches!(&err, ConnectError::Auth { user, .. } if user == "worker"),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        !text.contains("wrong-pw")
            && text.contains("worker:***@")
            && text.contains("user `worker`"),
        "{text}"
    );
}

#[tokio::test]
async fn durability_check_reports_aof_and_flags_what_is_missing() {
    let Some(durable) = common::server(RedisServerOptions { aof_always: true }) else {
        return;
    };
    let store = RedisStore::connect(RedisStoreOptions::new(
        durable.url(),
        StoreConfig::default(),
    ))
    .await
    .unwrap();
    let report = store.check_durability().await.unwrap();
    assert_eq!(report.appendonly.as_deref(), Some("yes"));
    assert_eq!(report.appendfsync.as_deref(), Some("always"));
    assert_eq!(report.maxmemory_policy.as_deref(), Some("noeviction"));
    assert!(report.problems().is_empty(), "{:?}", report.problems());

    let volatile = common::server(RedisServerOptions::default()).unwrap();
    let store = RedisStore::connect(RedisStoreOptions::new(
        volatile.url(),
        StoreConfig::default(),
    ))
    .await
    .unwrap();
    let problems = store.check_durability().await.unwrap().problems();
    assert!(
        problems.iter().any(|p| p.contains("appendonly yes")),
        "{problems:?}"
    );
}

#[tokio::test]
async fn durability_check_tolerates_a_user_without_config_rights() {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    add_user(&server.url(), &["~*", "+@all", "-config"]).await;
    let options = RedisStoreOptions {
        time: TimeSource::Server,
        ..RedisStoreOptions::new(user_url(&server.url(), "s3cret", 0), StoreConfig::default())
    };
    let store = RedisStore::connect(options).await.unwrap();
    let report = store.check_durability().await.expect("not an error");
    assert!(report.config_error.is_some(), "{report:?}");
    assert!(report.problems()[0].contains("check by hand"));
}

#[tokio::test]
async fn a_tls_url_to_a_plain_server_fails_the_handshake_with_a_clear_error() {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    let url = server.url().replacen("redis://", "rediss://", 1);
    let options = RedisStoreOptions {
        call_timeout: std::time::Duration::from_secs(2),
        ..RedisStoreOptions::new(url, StoreConfig::default())
    };
    let err = RedisStore::connect(options).await.unwrap_err();
    assert!(matches!(err, ConnectError::Unreachable { .. }), "{err}");
    assert!(err.to_string().contains("rediss://127.0.0.1"), "{err}");
}
