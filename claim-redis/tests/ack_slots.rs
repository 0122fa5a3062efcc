//! The ack in the hash-tagged (cluster) layout, on a private standalone server with the slot check on: a list in the queue's slot takes one script, a list elsewhere fence → push once → drop, and a crash between push and drop still ends with exactly one record.
//!
//! Script calls are counted with `INFO commandstats` (EVALSHA calls): the
//! one-script ack is 1 call, then the producer-key deletes (one pipelined
//! round trip: 2 rounds); the cross-slot ack is fence, push once, drop,
//! with the producer-key deletes pipelined beside the drop (3 rounds).

mod common;

use claim_core::ListReads;
use claim_core::lease::marker_expiry;
use claim_core::marker::{marker_value, record_digest};
use claim_core::store::{ClaimOutcome, StoreConfig, Submission};
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, Clock, ManualClock, OwnerToken};
use claim_redis::slots::hash_slot;
use claim_redis::testing::{RedisServer, RedisServerOptions};
use claim_redis::{KeyLayout, RedisStore, RedisStoreOptions, TimeSource};
use common::{ack_item, evalsha_calls};
use redis::AsyncCommands;
use std::sync::Arc;

struct Rig {
    _server: RedisServer,
    store: RedisStore,
    clock: Arc<ManualClock>,
    raw: redis::aio::MultiplexedConnection,
}

async fn rig() -> Option<Rig> {
    let server = common::server(RedisServerOptions::default())?;
    let clock = ManualClock::new(common::T0);
    let options = RedisStoreOptions {
        key_layout: KeyLayout::HashTagged,
        ..common::options(
            &server.url(),
            common::config(),
            TimeSource::Clock(clock.clone() as Arc<dyn Clock>),
        )
    };
    let store = RedisStore::connect(options).await.expect("connect");
    let raw = common::raw(&server.url()).await;
    Some(Rig {
        _server: server,
        store,
        clock,
        raw,
    })
}

fn submission(queue: &str, id: &str, list: &str) -> Submission {
    let mut e = common::envelope(queue, id);
    e.internal.result_queue_name = list.to_owned();
    e.submission()
}

/// Submits and claims `s` for `owner`.
async fn claimed(store: &RedisStore, queue: &str, owner: &OwnerToken, s: &Submission) {
    store.submit(queue, s).await.expect("submit");
    let out = store.claim(owner.on(queue), &[s.claim_request()]).await;
    assert!(
        matches!(out.unwrap()[..], [ClaimOutcome::Claimed { .. }]),
        "claimed"
    );
}

/// `a`, submitted to `queue` naming `list`, claimed by `w1` and acked as
/// one success into `list`, checked to have pushed and dropped the claim;
/// returns the submission and the scripts (EVALSHA calls) the ack took.
async fn acked_once(
    store: &RedisStore,
    raw: &mut redis::aio::MultiplexedConnection,
    (queue, list): (&str, &str),
) -> (Submission, u64) {
    let w1 = OwnerToken::new("w1");
    let s = submission(queue, "a", list);
    claimed(store, queue, &w1, &s).await;
    let before = evalsha_calls(raw).await;
    let out = store.ack(w1.on(queue), &[ack_item(&s, list, "one")]).await;
    let out = out.unwrap()[0];
    assert!(
        out.pushed && out.claim_dropped && !out.dead_lettered,
        "{out:?}"
    );
    (s, evalsha_calls(raw).await - before)
}

async fn records(rig: &Rig, list: &str) -> Vec<claim_core::Record> {
    rig.store.results(list).await.expect("results")
}

#[tokio::test]
async fn an_ack_to_a_list_in_the_queues_slot_is_one_atomic_script() {
    let Some(mut rig) = rig().await else { return };
    let (queue, list) = ("{q}jobs", "{q}results");
    let keys = rig.store.keys();
    assert_eq!(
        hash_slot(keys.list(list).as_bytes()),
        hash_slot(keys.queue(queue).pending.as_bytes())
    );
    let (s, scripts) = acked_once(&rig.store, &mut rig.raw, (queue, list)).await;
    // ack.lua once, then one del_if per producer key (active, cancel).
    assert_eq!(scripts, 1 + 2);
    assert_eq!(records(&rig, list).await.len(), 1);
    assert!(rig.store.claims(queue).await.unwrap().is_empty());
    let marker = keys.marker_for(&keys.queue(queue).pending, &s.generation);
    let marker: Option<String> = rig.raw.get(marker).await.unwrap();
    assert!(marker.is_some(), "the marker, in the queue's slot");
    let active: Option<String> = rig.raw.get(keys.active("a")).await.unwrap();
    assert_eq!(
        active, None,
        "the producer's active key holding this token is gone"
    );
}

#[tokio::test]
async fn an_ack_to_a_list_in_another_slot_pushes_once_drops_the_claim_and_fences_later_acks() {
    let Some(mut rig) = rig().await else { return };
    let (queue, list, other) = ("jobs", "results", "elsewhere");
    let keys = rig.store.keys();
    let slot = hash_slot(keys.queue(queue).pending.as_bytes());
    assert_ne!(hash_slot(keys.list(list).as_bytes()), slot);
    assert_ne!(hash_slot(keys.list(other).as_bytes()), slot);
    let (s, scripts) = acked_once(&rig.store, &mut rig.raw, (queue, list)).await;
    // fence, push_once, drop, then one del_if per producer key.
    assert_eq!(scripts, 3 + 2);
    let w1 = OwnerToken::new("w1");
    assert!(rig.store.claims(queue).await.unwrap().is_empty());
    // The marker in the list's slot and its copy in the queue's slot.
    let list_marker = keys.marker_for(&keys.list(list), &s.generation);
    let queue_marker = keys.marker_for(&keys.queue(queue).pending, &s.generation);
    let a: String = rig.raw.get(&list_marker).await.unwrap();
    let b: String = rig.raw.get(&queue_marker).await.unwrap();
    assert_eq!(a, b);
    // The same record again: its own record landed. Another record, even
    // to another list: suppressed. One record in all.
    let again = rig
        .store
        .ack(w1.on(queue), &[ack_item(&s, list, "one")])
        .await;
    let again = again.unwrap()[0];
    assert!(!again.pushed && again.own_record_landed, "{again:?}");
    let late = rig
        .store
        .ack(w1.on(queue), &[ack_item(&s, other, "two")])
        .await;
    let late = late.unwrap()[0];
    assert!(!late.pushed && !late.own_record_landed, "{late:?}");
    assert_eq!(records(&rig, list).await.len(), 1);
    assert!(records(&rig, other).await.is_empty());
}

#[tokio::test]
async fn a_crash_between_the_push_and_the_drop_still_yields_exactly_one_record() {
    // The member routes to the list the record went to: the reclaimer and
    // the next claim can look its marker up.
    crash_between_push_and_drop("results", "results").await;
}

#[tokio::test]
async fn a_crash_between_push_and_drop_then_a_redelivery_is_suppressed_by_the_marker() {
    // The record went to a list the member does not name, so nothing but
    // the push itself finds the marker: the request is redelivered, run
    // again, and its second record is suppressed in the list's slot.
    let rerun = crash_between_push_and_drop("results", "answers").await;
    assert!(
        rerun.unwrap_or(true),
        "the request ran again and was suppressed"
    );
}

/// w1 claims a request routed to `routed`, its ack pushes to `list` and
/// w1 dies before the drop; whatever follows, one record. Says whether
/// the request ran a second time (`None`: skipped, no redis-server).
async fn crash_between_push_and_drop(routed: &str, list: &str) -> Option<bool> {
    let mut rig = rig().await?;
    let mut rerun = false;
    let queue = "jobs";
    let keys = rig.store.keys().clone();
    let (w1, w2) = (OwnerToken::new("w1"), OwnerToken::new("w2"));
    let s = submission(queue, "a", routed);
    claimed(&rig.store, queue, &w1, &s).await;
    // w1's ack runs step (b) alone, exactly as push_once.lua writes it
    // (record, marker in the list's slot), and w1 dies before the drop.
    let first = ack_item(&s, list, "w1's answer");
    let digest = record_digest(first.record.as_bytes());
    // w1 held the claim: its marker lives the dedup TTL.
    let expiry = marker_expiry(common::T0, StoreConfig::default().result_dedup_ttl_ms);
    let list_key = keys.list(list);
    let _: () = rig
        .raw
        .lpush(&list_key, first.record.as_bytes())
        .await
        .unwrap();
    let _: () = rig
        .raw
        .set(
            keys.marker_for(&list_key, &s.generation),
            marker_value(expiry.0, &digest),
        )
        .await
        .unwrap();
    assert_eq!(
        rig.store.claims(queue).await.unwrap().len(),
        1,
        "the claim stays"
    );
    // Its lease lapses. The reclaimer either finds the marker (the claim is
    // leftover bookkeeping of an answered generation: dropped), or puts the
    // request back; then the next holder sees the marker at claim, or runs
    // the request again and its record is suppressed by the marker.
    rig.clock.advance(common::config().lease_ttl_ms + 1_000);
    let report = rig.store.reclaim_expired(queue, 10).await.unwrap();
    assert_eq!(report.redelivered + report.ghosts_repaired, 1, "{report:?}");
    if report.redelivered == 1 {
        match rig
            .store
            .claim(w2.on(queue), &[s.claim_request()])
            .await
            .unwrap()[..]
        {
            [ClaimOutcome::Claimed { .. }] => {
                let second = ack_item(&s, list, "w2's answer");
                let out = rig.store.ack(w2.on(queue), &[second]).await.unwrap()[0];
                assert!(!out.pushed && out.claim_dropped, "{out:?}");
                rerun = true;
            }
            [ClaimOutcome::DuplicateDropped] => {}
            ref other => panic!("unexpected claim outcome {other:?}"),
        }
    }
    assert_eq!(records(&rig, list).await, vec![first.record.clone()]);
    assert!(rig.store.claims(queue).await.unwrap().is_empty());
    assert!(rig.store.peek(queue, 0, 10).await.unwrap().is_empty());
    Some(rerun)
}
