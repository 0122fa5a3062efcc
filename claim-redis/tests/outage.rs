//! Connection trouble: clear errors at start, classified errors (never panics) mid-run, recovery after restart.

mod common;

use claim_core::store::{ClaimRequest, StoreConfig, Submission};
use claim_core::{
    ClaimInspect, ClaimProducer, ClaimStore, Generation, Member, OwnerToken, StoreError,
};
use claim_redis::testing::RedisServerOptions;
use claim_redis::{ConnectError, RedisStore, RedisStoreOptions, TimeSource};
use std::time::Duration;

fn free_port() -> u16 {
    claim_redis::testing::free_port().expect("a free loopback port")
}

#[tokio::test]
async fn connecting_to_a_redis_that_is_down_names_the_url_and_what_to_check() {
    let url = format!("redis://user:hunter2@127.0.0.1:{}/0", free_port());
    let options = RedisStoreOptions {
        call_timeout: Duration::from_secs(1),
        ..RedisStoreOptions::new(&url, StoreConfig::default())
    };
    let err = RedisStore::connect(options).await.unwrap_err();
    assert!(matches!(err, ConnectError::Unreachable { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("127.0.0.1") && text.contains("redis-server is running"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "passwords never appear: {text}");
}

#[tokio::test]
async fn bad_urls_and_configs_are_refused_before_connecting() {
    let bad_url = RedisStore::connect(RedisStoreOptions::new(
        "http://localhost",
        StoreConfig::default(),
    ));
    let err = bad_url.await.unwrap_err().to_string();
    assert!(
        err.contains("http://localhost") && err.contains("expected redis://"),
        "{err}"
    );
    let config = StoreConfig {
        lease_ttl_ms: 0,
        ..StoreConfig::default()
    };
    let err = RedisStore::connect(RedisStoreOptions::new("redis://127.0.0.1:1", config))
        .await
        .unwrap_err();
    assert!(matches!(err, ConnectError::Config(_)), "{err}");
    assert!(err.to_string().contains("claim_lease_ttl_seconds"), "{err}");
}

#[tokio::test]
async fn operations_fail_cleanly_while_redis_is_down_and_work_again_after_restart() {
    let Some(mut server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    let (store, _clock) = common::manual_store(&server.url(), common::config()).await;
    let deadline = (common::T0.0 / 1000) as i64 + 3600;
    let req = ClaimRequest {
        member: Member::from(common::member("a", "t", deadline)),
        generation: Generation::new("a", "t"),
    };
    let owner = OwnerToken::new("w");
    server.kill();

    let read = store.depths("q").await.unwrap_err();
    assert!(
        matches!(read, StoreError::Failed { .. }),
        "a read never happened: {read}"
    );
    let write = store
        .claim(owner.on("q"), std::slice::from_ref(&req))
        .await
        .unwrap_err();
    assert!(
        matches!(
            write,
            StoreError::Failed { .. } | StoreError::Indeterminate { .. }
        ),
        "{write}"
    );
    assert!(store.ping().await.is_err());

    server.restart().expect("restart");
    let submission = Submission {
        member: req.member.clone(),
        generation: req.generation.clone(),
        deadline,
        payload: None,
    };
    store
        .submit("q", &submission)
        .await
        .expect("submit after restart");
    let claimed = store
        .claim(owner.on("q"), &[req])
        .await
        .expect("claim after restart");
    assert_eq!(claimed.len(), 1);
    assert_eq!(store.depths("q").await.unwrap().claimed, 1);
}

#[tokio::test]
async fn a_timed_out_write_is_indeterminate_and_a_timed_out_read_failed() {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    let url = server.url();
    let clock = claim_core::ManualClock::new(common::T0);
    let mut options = common::options(&url, common::config(), TimeSource::Clock(clock));
    options.call_timeout = Duration::from_millis(500);
    let store = RedisStore::connect(options).await.unwrap();
    store.ping().await.unwrap();
    let mut raw = common::raw(&url).await;
    let pause = |mode: &str| {
        redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(1500)
            .arg(mode)
            .to_owned()
    };

    // Writes (scripts included) wait out the pause: the script may yet run.
    let _: () = pause("WRITE").query_async(&mut raw).await.unwrap();
    let (gens, owner) = ([Generation::new("a", "t")], OwnerToken::new("w"));
    let write = store.release(owner.on("q"), &gens).await.unwrap_err();
    assert!(matches!(write, StoreError::Indeterminate { .. }), "{write}");
    let _: () = redis::cmd("CLIENT")
        .arg("UNPAUSE")
        .query_async(&mut raw)
        .await
        .unwrap();

    // Everything waits: a read that times out changed nothing.
    let _: () = pause("ALL").query_async(&mut raw).await.unwrap();
    let read = store.depths("q").await.unwrap_err();
    assert!(matches!(read, StoreError::Failed { .. }), "{read}");
}
