//! The hash-tagged (Redis Cluster) layout beside Go processors: retries a Go processor parks in the shared retry set reach their queue, and a hand-over interrupted between its two steps never makes a second live copy.

mod common;

use claim_core::store::{ClaimOutcome, ClaimRequest};
use claim_core::{ClaimInspect, ClaimStore, Clock, Generation, ManualClock, Member, OwnerToken};
use claim_redis::testing::RedisServerOptions;
use claim_redis::{KeyLayout, RedisStore, RedisStoreOptions, TimeSource};
use common::{T0, T0_S};
use redis::AsyncCommands;
use std::sync::Arc;

/// The Go producer's default queue, which `common::member` names.
const QUEUE: &str = "request-sortedset";

/// A private server, a hash-tagged store on a manual clock at T0, and a raw connection.
async fn tagged() -> Option<(
    claim_redis::testing::RedisServer,
    RedisStore,
    redis::aio::MultiplexedConnection,
)> {
    let server = common::server(RedisServerOptions::default())?;
    let clock = ManualClock::new(T0);
    let time = TimeSource::Clock(clock as Arc<dyn Clock>);
    let options = RedisStoreOptions {
        key_layout: KeyLayout::HashTagged,
        ..common::options(&server.url(), common::config(), time)
    };
    let store = RedisStore::connect(options).await.expect("connect");
    let raw = common::raw(&server.url()).await;
    Some((server, store, raw))
}

fn claim_of(member: &[u8]) -> ClaimRequest {
    ClaimRequest {
        member: Member::from(member.to_vec()),
        generation: Generation::new("go", "t"),
    }
}

#[tokio::test]
async fn a_retry_a_go_processor_parked_in_the_shared_set_is_promoted_to_its_queue() {
    let Some((_server, store, mut raw)) = tagged().await else {
        return;
    };
    let deadline = T0_S + 600;
    let member = common::member("go", "t", deadline);
    let shared = store.keys().retry().to_owned();
    let _: () = raw.zadd(&shared, &member, T0_S - 1).await.unwrap();
    assert_eq!(store.retry_depth().await.unwrap(), 1);

    assert_eq!(store.promote_due(100).await.unwrap(), 1);
    let pending = store.peek(QUEUE, 0, 10).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].member.as_bytes(), member.as_slice());
    assert_eq!(pending[0].score.0, deadline as f64);
    assert_eq!(store.retry_depth().await.unwrap(), 0);
    let left: usize = raw.zcard(&shared).await.unwrap();
    assert_eq!(left, 0);
}

#[tokio::test]
async fn a_hand_over_interrupted_between_its_add_and_its_remove_never_makes_a_second_live_copy() {
    let Some((_server, store, mut raw)) = tagged().await else {
        return;
    };
    let member = common::member("go", "t", T0_S + 600);
    let shared = store.keys().retry().to_owned();
    let own = store.keys().queue(QUEUE).retry;
    // A crash after the add to the queue's own set, before the remove
    // from the shared set: identical bytes in both.
    let _: () = raw.zadd(&shared, &member, T0_S - 1).await.unwrap();
    let _: () = raw.zadd(&own, &member, T0_S - 1).await.unwrap();
    store.promote_due(100).await.unwrap();
    assert_eq!(store.peek(QUEUE, 0, 10).await.unwrap().len(), 1);
    assert_eq!(store.retry_depth().await.unwrap(), 0);

    // Claimed, then the same bytes come back from the shared set (the
    // crash happened after the first copy had been promoted and claimed):
    // the copy is promoted, and a claim drops it as a duplicate of a held
    // generation.
    let w1 = OwnerToken::new("w1");
    let got = store
        .claim(w1.on(QUEUE), &[claim_of(&member)])
        .await
        .unwrap();
    assert!(matches!(got[0], ClaimOutcome::Claimed { .. }), "{got:?}");
    let _: () = raw.zadd(&shared, &member, T0_S - 1).await.unwrap();
    store.promote_due(100).await.unwrap();
    let w2 = OwnerToken::new("w2");
    let again = store
        .claim(w2.on(QUEUE), &[claim_of(&member)])
        .await
        .unwrap();
    assert_eq!(again, vec![ClaimOutcome::DuplicateDropped]);
    assert!(store.peek(QUEUE, 0, 10).await.unwrap().is_empty());
    let claims = store.claims(QUEUE).await.unwrap();
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0].owner, w1);
}
