//! The slot check of the hash-tagged (Redis Cluster) key layout on a real store: a call whose keys would cross slots is refused before it is sent.

mod common;
mod suite;

use claim_core::ClaimProducer;
use claim_redis::KeyLayout;
use suite::Redis;

const LAYOUT: KeyLayout = KeyLayout::HashTagged;

/// The slot check on a real store: a queue name no base can share a slot
/// with (`x}y`: its base `{x}y}` hashes by `x`) makes every script call
/// of that queue cross slots, and the check refuses it before it is sent,
/// naming the keys and their slots.
#[tokio::test]
async fn a_call_whose_keys_would_cross_slots_is_refused_before_it_is_sent_naming_the_keys() {
    use claim_conformance::{StoreFactory, T0};
    use claim_core::ClaimStore;
    use claim_core::store::{ClaimRequest, StoreConfig};
    use claim_core::{Generation, ManualClock, OwnerToken};

    let Some(redis) = Redis::start(LAYOUT) else {
        return;
    };
    let store = redis
        .make(StoreConfig::default(), ManualClock::new(T0))
        .await;
    let queue = "x}y";
    let why = store.keys().queue_refusal(queue).expect("x}y is refused");
    assert!(why.contains("hash tag"), "{why}");
    let s = common::submission("a", "t", common::T0_S + 60);
    // A single-key ZADD (and single-key producer writes) pass.
    store.submit(queue, &s).await.expect("submit");
    let request = ClaimRequest {
        member: s.member.clone(),
        generation: Generation::new("a", "t"),
    };
    let err = store
        .claim(OwnerToken::new("w").on(queue), &[request])
        .await
        .expect_err("a cross-slot claim is refused");
    let text = err.to_string();
    assert!(!err.is_transient(), "{err:?}");
    assert!(
        text.contains("would cross Redis Cluster slots")
            && text.contains("x}y\" (slot")
            && text.contains("x}y}:claimed\" (slot"),
        "{text}"
    );
    // Nothing was sent: the member is still pending.
    assert_eq!(store.peek(queue, 0, 10).await.unwrap().len(), 1);
}

/// A configured result list whose terminal markers could not share its
/// slot (only a key prefix opening a brace it never closes can do that)
/// is refused at connect, naming the list, before anything is sent.
#[tokio::test]
async fn a_configured_result_list_whose_markers_cannot_share_its_slot_is_refused_at_connect() {
    let config = claim_core::store::StoreConfig {
        default_result_list: "results".into(),
        ..common::config()
    };
    let options = claim_redis::RedisStoreOptions {
        key_prefix: "t{x:".into(),
        key_layout: LAYOUT,
        ..claim_redis::RedisStoreOptions::new("redis://127.0.0.1:1", config)
    };
    let err = claim_redis::RedisStore::connect(options)
        .await
        .expect_err("refused");
    let text = err.to_string();
    assert!(
        text.contains("\"results\"") && text.contains("prefix without braces"),
        "{text}"
    );
}
