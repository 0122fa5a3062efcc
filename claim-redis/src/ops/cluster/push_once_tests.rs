//! Tests of `push_once` on a private redis-server with the hash-tagged layout: one record per generation, its own record recognised, unusable lists, TTLs, a resent call.

use super::{PushItem, Pushed, push_once};
use crate::keys::KeyLayout;
use crate::testing::{RedisServer, RedisServerOptions, random_prefix, require_redis_server};
use crate::{RedisStore, RedisStoreOptions, TimeSource};
use claim_core::marker::record_digest;
use claim_core::store::StoreConfig;
use claim_core::{Clock, Generation, ManualClock, Millis};
use redis::AsyncCommands;
use std::sync::Arc;

const T0: Millis = Millis(1_700_000_000_000);
const DEADLINE: i64 = 1_700_003_600;

struct Rig {
    _server: RedisServer,
    store: RedisStore,
    raw: redis::aio::MultiplexedConnection,
}

/// A hash-tagged store on a manual clock; `None` when redis-server is
/// missing outside CI (in CI that panics).
async fn rig() -> Option<Rig> {
    rig_with(StoreConfig::default(), ManualClock::new(T0)).await
}

/// [`rig`] with `config`, on `clock`.
async fn rig_with(config: StoreConfig, clock: Arc<ManualClock>) -> Option<Rig> {
    require_redis_server()?;
    let server = RedisServer::start(RedisServerOptions::default()).expect("redis-server");
    let options = RedisStoreOptions {
        key_prefix: random_prefix(),
        time: TimeSource::Clock(clock as Arc<dyn Clock>),
        key_layout: KeyLayout::HashTagged,
        ..RedisStoreOptions::new(server.url(), config)
    };
    let store = RedisStore::connect(options).await.expect("connect");
    let raw = redis::Client::open(server.url())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("raw connection");
    Some(Rig {
        _server: server,
        store,
        raw,
    })
}

/// Owns what a [`PushItem`] borrows.
struct Owned {
    generation: Generation,
    record: Vec<u8>,
    digest: String,
}

fn owned(id: &str, record: &str) -> Owned {
    Owned {
        generation: Generation::new(id, "tok"),
        record: record.as_bytes().to_vec(),
        digest: record_digest(record.as_bytes()),
    }
}

fn items(owned: &[Owned]) -> Vec<PushItem<'_>> {
    owned
        .iter()
        .map(|o| PushItem {
            generation: &o.generation,
            record: &o.record,
            digest: &o.digest,
            other_claim_deadline: DEADLINE,
        })
        .collect()
}

/// Push once of `owned` into `list` (list TTL `ttl`), which must not fail.
async fn pushed(store: &RedisStore, list: &str, ttl: u64, owned: &[Owned]) {
    push_once(store, list, ttl, &items(owned)).await.unwrap();
}

async fn records(rig: &mut Rig, list: &str) -> Vec<String> {
    let key = rig.store.keys().list(list);
    rig.raw.lrange(key, 0, -1).await.expect("LRANGE")
}

#[tokio::test]
async fn a_generation_gets_one_record_and_a_repeat_is_its_own_record_or_suppressed() {
    let Some(mut rig) = rig().await else { return };
    let first = [owned("a", "rec-a"), owned("b", "rec-b")];
    let answer = push_once(&rig.store, "results", 0, &items(&first)).await;
    assert_eq!(answer.unwrap(), [Pushed::Pushed, Pushed::Pushed]);
    let again = [owned("a", "rec-a"), owned("b", "other-b")];
    let answer = push_once(&rig.store, "results", 0, &items(&again)).await;
    assert_eq!(
        answer.unwrap(),
        [Pushed::OwnRecordLanded, Pushed::Suppressed]
    );
    // LPUSH in item order: the consumer's BRPOP takes "a" first.
    assert_eq!(records(&mut rig, "results").await, ["rec-b", "rec-a"]);
}

#[tokio::test]
async fn a_generation_repeated_in_one_batch_is_pushed_once() {
    let Some(mut rig) = rig().await else { return };
    let batch = [owned("a", "rec-a"), owned("a", "rec-a"), owned("a", "x")];
    let answer = push_once(&rig.store, "results", 0, &items(&batch)).await;
    assert_eq!(
        answer.unwrap(),
        [Pushed::Pushed, Pushed::OwnRecordLanded, Pushed::Suppressed]
    );
    assert_eq!(records(&mut rig, "results").await, ["rec-a"]);
}

#[tokio::test]
async fn the_marker_lies_in_the_lists_slot_and_beside_another_claim_expires_after_the_deadline_grace_and_dedup_ttl()
 {
    let Some(mut rig) = rig().await else { return };
    let one = [owned("a", "rec-a")];
    pushed(&rig.store, "{elsewhere}results", 0, &one).await;
    let keys = rig.store.keys();
    let list_key = keys.list("{elsewhere}results");
    let marker = keys.marker_for(&list_key, &one[0].generation);
    assert_eq!(
        crate::slots::hash_slot(marker.as_bytes()),
        crate::slots::hash_slot(list_key.as_bytes())
    );
    let value: String = rig.raw.get(&marker).await.expect("marker");
    let expiry = DEADLINE as u64 * 1000 + 30_000 + StoreConfig::default().result_dedup_ttl_ms;
    assert_eq!(value, format!("{expiry}:{}", one[0].digest));
}

#[tokio::test]
async fn a_list_holding_another_type_is_unusable_and_nothing_is_written() {
    let Some(mut rig) = rig().await else { return };
    let key = rig.store.keys().list("results");
    let _: () = rig.raw.zadd(&key, "m", 1).await.unwrap();
    let one = [owned("a", "rec-a")];
    let answer = push_once(&rig.store, "results", 60, &items(&one)).await;
    assert_eq!(
        answer.unwrap(),
        [Pushed::Unusable(
            "result list \"results\" holds a zset".to_owned()
        )]
    );
    let marker = rig.store.keys().marker_for(&key, &one[0].generation);
    let exists: bool = rig.raw.exists(&marker).await.unwrap();
    let ttl: i64 = rig.raw.ttl(&key).await.unwrap();
    assert!(!exists, "no marker for an unusable list");
    assert_eq!(ttl, -1, "no EXPIRE on an unusable list");
}

#[tokio::test]
async fn the_list_gets_its_ttl_only_when_something_was_pushed() {
    let Some(mut rig) = rig().await else { return };
    let one = [owned("a", "rec-a")];
    pushed(&rig.store, "results", 600, &one).await;
    let key = rig.store.keys().list("results");
    let _: () = rig.raw.persist(&key).await.unwrap();
    let answer = push_once(&rig.store, "results", 600, &items(&one)).await;
    assert_eq!(answer.unwrap(), [Pushed::OwnRecordLanded]);
    let ttl: i64 = rig.raw.ttl(&key).await.unwrap();
    assert_eq!(ttl, -1, "a call that pushed nothing sets no EXPIRE");
    pushed(&rig.store, "results", 600, &[owned("b", "rec-b")]).await;
    let ttl: i64 = rig.raw.ttl(&key).await.unwrap();
    assert!((1..=600).contains(&ttl), "{ttl}");
}

#[tokio::test]
async fn a_crash_between_the_push_and_the_claim_drop_ends_the_claim_on_the_short_lived_marker() {
    use claim_core::store::Submission;
    use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, Member, OwnerToken};
    let config = StoreConfig {
        lease_ttl_ms: 30_000,
        default_result_list: "{elsewhere}results".to_owned(),
        ..StoreConfig::default()
    };
    let (ttl, clock) = (config.result_dedup_ttl_ms, ManualClock::new(T0));
    let Some(mut rig) = rig_with(config, clock.clone()).await else {
        return;
    };
    let member = format!(
        r#"{{"internal":{{"request_token":"tok"}},"request_kind":"redis","data":{{"id":"a","deadline":{DEADLINE},"payload":{{}}}}}}"#
    );
    let s = Submission {
        member: Member::from(member.as_str()),
        generation: Generation::new("a", "tok"),
        deadline: DEADLINE,
        payload: None,
    };
    let store = &rig.store;
    store.submit("jobs", &s).await.unwrap();
    let w1 = OwnerToken::new("w1");
    store
        .claim(w1.on("jobs"), &[s.claim_request()])
        .await
        .unwrap();
    // The ack's push lands in the list's slot (the caller held the claim:
    // a dedup-TTL marker), then the process dies before its drop.
    let one = [owned("a", "rec-a")];
    let push = PushItem {
        other_claim_deadline: 0,
        ..items(&one).remove(0)
    };
    let answer = push_once(store, "{elsewhere}results", 0, &[push]).await;
    assert_eq!(answer.unwrap(), [Pushed::Pushed]);
    let keys = store.keys();
    let marker = keys.marker_for(&keys.list("{elsewhere}results"), &s.generation);
    let value: String = rig.raw.get(&marker).await.expect("marker");
    assert_eq!(value, format!("{}:{}", T0.0 + ttl, one[0].digest));
    // The claim lapses; the reclaimer reads the marker in the list's slot
    // and ends the claim as answered instead of redelivering it.
    clock.advance(31_000);
    let report = store.reclaim_expired("jobs", 10).await.unwrap();
    assert_eq!(
        (report.redelivered, report.ghosts_repaired),
        (0, 1),
        "{report:?}"
    );
    assert!(store.peek("jobs", 0, 10).await.unwrap().is_empty());
    assert!(store.claims("jobs").await.unwrap().is_empty());
    assert_eq!(records(&mut rig, "{elsewhere}results").await, ["rec-a"]);
}
