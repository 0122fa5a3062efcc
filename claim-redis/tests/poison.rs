//! Poison isolation on a real server: foreign keys of other types answer their own item, and a failing call writes nothing.
//!
//! The conformance suite makes wrong-type keys through the trait; these
//! tests place strings, hashes and sets with raw commands, as an operator's
//! typo or another program would.

mod common;

use claim_core::ListReads;
use claim_core::store::{AckItem, ClaimOutcome, ClaimRequest, ParkItem, Submission};
use claim_core::wire::ResultRecord;
use claim_core::{
    ClaimInspect, ClaimProducer, ClaimStore, Generation, Member, OwnerToken, Score, StoreError,
};
use claim_redis::RedisStore;
use common::{T0, snapshot};
use redis::aio::MultiplexedConnection;
use std::collections::BTreeMap;

const Q: &str = "q";

/// A submitted request: its member, generation and deadline.
struct Req {
    member: Member,
    generation: Generation,
    deadline: i64,
}

impl Req {
    fn new(id: &str) -> Req {
        let deadline = (T0.0 / 1000) as i64 + 3600;
        Req {
            member: Member::from(common::member(id, "t", deadline)),
            generation: Generation::new(id, "t"),
            deadline,
        }
    }

    fn claim(&self) -> ClaimRequest {
        ClaimRequest {
            member: self.member.clone(),
            generation: self.generation.clone(),
        }
    }

    fn ack(&self, list: &str) -> AckItem {
        AckItem {
            generation: self.generation.clone(),
            member: self.member.clone(),
            score: Score(self.deadline as f64),
            result_list: list.to_owned(),
            record: ResultRecord::success(&self.generation.id, 200, "done")
                .to_json_bytes()
                .into(),
            payload_ref: None,
            result_ttl_seconds: 0,
        }
    }
}

async fn submitted(store: &RedisStore, ids: &[&str]) -> Vec<Req> {
    let mut out = Vec::new();
    for id in ids {
        let r = Req::new(id);
        let s = Submission {
            member: r.member.clone(),
            generation: r.generation.clone(),
            deadline: r.deadline,
            payload: None,
        };
        store.submit(Q, &s).await.unwrap();
        out.push(r);
    }
    out
}

async fn claimed(store: &RedisStore, owner: &OwnerToken, ids: &[&str]) -> Vec<Req> {
    let reqs = submitted(store, ids).await;
    let items: Vec<ClaimRequest> = reqs.iter().map(Req::claim).collect();
    let out = store.claim(owner.on(Q), &items).await.unwrap();
    assert!(
        out.iter()
            .all(|o| matches!(o, ClaimOutcome::Claimed { .. }))
    );
    reqs
}

/// Runs a raw command; panics on an error.
async fn raw_cmd(raw: &mut MultiplexedConnection, args: &[&str]) {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    let _: redis::Value = cmd.query_async(raw).await.unwrap();
}

/// Asserts every key under `prefix` is as `before` captured it.
async fn assert_nothing_written(
    raw: &mut MultiplexedConnection,
    prefix: &str,
    before: &BTreeMap<Vec<u8>, Vec<u8>>,
) {
    assert_eq!(*before, snapshot(raw, prefix).await, "nothing was written");
}

fn rejected(result: Result<impl std::fmt::Debug, StoreError>, what: &str) {
    match result {
        Err(StoreError::Rejected { detail, .. }) => {
            assert!(detail.contains("WRONGTYPE"), "{what}: {detail}")
        }
        other => panic!("{what}: expected a permanent rejection, got {other:?}"),
    }
}

#[tokio::test]
async fn result_lists_holding_a_string_hash_or_set_dead_letter_their_items_alone() {
    let mut rig = rig_or_skip!();
    let p = rig.store.keys().prefix().to_owned();
    raw_cmd(&mut rig.raw, &["SET", &format!("{p}as-string"), "x"]).await;
    raw_cmd(&mut rig.raw, &["HSET", &format!("{p}as-hash"), "f", "v"]).await;
    raw_cmd(&mut rig.raw, &["SADD", &format!("{p}as-set"), "m"]).await;
    let owner = OwnerToken::new("w");
    let rs = claimed(&rig.store, &owner, &["a", "b", "c", "d"]).await;
    let items = [
        rs[0].ack("as-string"),
        rs[1].ack("as-hash"),
        rs[2].ack("results"),
        rs[3].ack("as-set"),
    ];
    let out = rig.store.ack(owner.on(Q), &items).await.unwrap();
    let dead: Vec<bool> = out.iter().map(|o| o.dead_lettered).collect();
    assert_eq!(dead, vec![true, true, false, true]);
    assert!(out.iter().all(|o| o.claim_dropped));
    assert!(out[2].pushed && !out[0].pushed);
    assert_eq!(rig.store.results("results").await.unwrap().len(), 1);
    let entries = rig.store.dead_entries(Q).await.unwrap();
    let reason = |r: &Req| {
        entries
            .iter()
            .find(|d| d.member == r.member)
            .map(|d| d.reason.clone())
            .unwrap_or_default()
    };
    assert_eq!(reason(&rs[0]), "result list \"as-string\" holds a string");
    assert_eq!(reason(&rs[1]), "result list \"as-hash\" holds a hash");
    assert_eq!(reason(&rs[3]), "result list \"as-set\" holds a set");
    assert_eq!(rig.store.depths(Q).await.unwrap().claimed, 0);
}

#[tokio::test]
async fn a_marker_or_cancel_key_of_another_type_dead_letters_that_claim_item_alone() {
    let mut rig = rig_or_skip!();
    let rs = submitted(&rig.store, &["a", "b", "c"]).await;
    let marker = rig.store.keys().marker(&rs[0].generation);
    raw_cmd(&mut rig.raw, &["HSET", &marker, "f", "v"]).await;
    raw_cmd(&mut rig.raw, &["SADD", &rig.store.keys().cancel("b"), "t"]).await;
    let items: Vec<ClaimRequest> = rs.iter().map(Req::claim).collect();
    let out = rig
        .store
        .claim(OwnerToken::new("w").on(Q), &items)
        .await
        .unwrap();
    assert_eq!(out[0], ClaimOutcome::DeadLettered);
    assert_eq!(out[1], ClaimOutcome::DeadLettered);
    assert!(matches!(out[2], ClaimOutcome::Claimed { .. }), "{out:?}");
    let dead = rig.store.dead_entries(Q).await.unwrap();
    assert_eq!(dead.len(), 2);
    assert!(
        dead.iter()
            .any(|d| d.reason == "key \"result-terminal:1:a:t\" holds a hash, not a string"),
        "{dead:?}"
    );
    assert!(
        dead.iter().any(|d| d.reason.contains("request-cancel:b")),
        "{dead:?}"
    );
    let d = rig.store.depths(Q).await.unwrap();
    assert_eq!((d.pending, d.claimed, d.dead), (0, 1, 2));
}

#[tokio::test]
async fn every_script_that_fails_writes_nothing_and_the_error_is_permanent() {
    let mut rig = rig_or_skip!();
    let p = rig.store.keys().prefix().to_owned();
    let q = rig.store.keys().queue(Q);
    let owner = OwnerToken::new("w");
    let held = claimed(&rig.store, &owner, &["held"]).await.remove(0);
    let waiting = submitted(&rig.store, &["waiting"]).await.remove(0);
    // The claims index holds a string: every script that writes it fails.
    let index_value: Vec<(String, f64)> = redis::cmd("ZRANGE")
        .arg(&q.index)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query_async(&mut rig.raw)
        .await
        .unwrap();
    raw_cmd(&mut rig.raw, &["DEL", &q.index]).await;
    raw_cmd(&mut rig.raw, &["SET", &q.index, "not a zset"]).await;
    let before = snapshot(&mut rig.raw, &p).await;
    let g = std::slice::from_ref(&held.generation);
    rejected(
        rig.store.claim(owner.on(Q), &[waiting.claim()]).await,
        "claim",
    );
    rejected(
        rig.store.ack(owner.on(Q), &[held.ack("results")]).await,
        "ack",
    );
    rejected(rig.store.renew(owner.on(Q), g).await, "renew");
    rejected(rig.store.release(owner.on(Q), g).await, "release");
    let park = ParkItem {
        generation: held.generation.clone(),
        member: held.member.clone(),
        due: T0,
    };
    rejected(
        rig.store.park_retry(owner.on(Q), &[park]).await,
        "park_retry",
    );
    rig.clock.advance(31_000);
    rejected(rig.store.reclaim_expired(Q, 10).await, "reclaim_expired");
    assert_nothing_written(&mut rig.raw, &p, &before).await;

    // The index back, the dead hash a string: dead-lettering and the
    // reclaimer at the delivery limit fail whole, writing nothing.
    raw_cmd(&mut rig.raw, &["DEL", &q.index]).await;
    for (member, score) in &index_value {
        raw_cmd(
            &mut rig.raw,
            &["ZADD", &q.index, &score.to_string(), member],
        )
        .await;
    }
    raw_cmd(&mut rig.raw, &["SET", &q.dead, "not a hash"]).await;
    raw_cmd(
        &mut rig.raw,
        &["SET", rig.store.keys().retry(), "not a zset"],
    )
    .await;
    let owners: String = redis::cmd("HGET")
        .arg(&q.owners)
        .arg(held.generation.claim_key())
        .query_async(&mut rig.raw)
        .await
        .unwrap();
    let at_limit = owners.replace("|0", "|2");
    raw_cmd(
        &mut rig.raw,
        &["HSET", &q.owners, &held.generation.claim_key(), &at_limit],
    )
    .await;
    let before = snapshot(&mut rig.raw, &p).await;
    rejected(
        rig.store.dead_letter(Q, &waiting.member, "bad").await,
        "dead_letter",
    );
    rejected(
        rig.store.reclaim_expired(Q, 10).await,
        "reclaim at the limit",
    );
    rejected(rig.store.promote_due(10).await, "promote_due");
    assert_nothing_written(&mut rig.raw, &p, &before).await;
}

#[tokio::test]
async fn the_queues_own_pending_key_of_another_type_rejects_claim_and_ack_whole() {
    let mut rig = rig_or_skip!();
    let p = rig.store.keys().prefix().to_owned();
    let owner = OwnerToken::new("w");
    let held = claimed(&rig.store, &owner, &["held"]).await.remove(0);
    let q = rig.store.keys().queue(Q);
    raw_cmd(&mut rig.raw, &["SET", &q.pending, "not a zset"]).await;
    let before = snapshot(&mut rig.raw, &p).await;
    rejected(rig.store.claim(owner.on(Q), &[held.claim()]).await, "claim");
    rejected(
        rig.store.ack(owner.on(Q), &[held.ack("results")]).await,
        "ack",
    );
    assert_nothing_written(&mut rig.raw, &p, &before).await;
}

#[tokio::test]
async fn a_later_claim_call_that_fails_answers_the_earlier_claims_instead_of_orphaning_them() {
    let mut rig = rig_or_skip!();
    let n = claim_core::store::MAX_BATCH;
    let ids: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
    let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let reqs = submitted(&rig.store, &id_refs).await;
    // The rig.server refuses any argument over 1 MiB: the second call, which
    // carries one, fails before it runs.
    raw_cmd(
        &mut rig.raw,
        &["CONFIG", "SET", "proto-max-bulk-len", "1048576"],
    )
    .await;
    let mut items: Vec<ClaimRequest> = reqs.iter().map(Req::claim).collect();
    items.push(ClaimRequest {
        member: Member::from(vec![b'x'; 2 << 20]),
        generation: Generation::new("huge", "t"),
    });
    let owner = OwnerToken::new("w");
    let out = rig
        .store
        .claim(owner.on(Q), &items)
        .await
        .expect("the first call's claims are answered");
    let claimed = out
        .iter()
        .filter(|o| matches!(o, ClaimOutcome::Claimed { .. }))
        .count();
    assert_eq!(claimed, n);
    assert_eq!(out[n], ClaimOutcome::NotPending);
    // The rig.server closed the connection that carried the refused argument;
    // the pool learns that on its next use (a transient failure).
    let mut held = None;
    for _ in 0..3 {
        match rig.store.claims(Q).await {
            Ok(claims) => {
                held = Some(claims.len());
                break;
            }
            Err(e) => assert!(e.is_transient(), "{e}"),
        }
    }
    assert_eq!(
        held,
        Some(n),
        "the first call's claims are held, not orphaned"
    );
}

#[tokio::test]
async fn a_full_server_answers_out_of_memory_which_is_transient_and_clears_when_memory_is_freed() {
    let mut rig = rig_or_skip!();
    let owner = OwnerToken::new("w");
    let held = claimed(&rig.store, &owner, &["held"]).await.remove(0);
    raw_cmd(
        &mut rig.raw,
        &["CONFIG", "SET", "maxmemory-policy", "noeviction"],
    )
    .await;
    raw_cmd(&mut rig.raw, &["CONFIG", "SET", "maxmemory", "1"]).await;
    let ack = [held.ack("results")];
    let err = rig.store.ack(owner.on(Q), &ack).await.unwrap_err();
    assert!(err.is_out_of_memory() && err.is_transient(), "{err:?}");
    assert!(!err.may_have_happened(), "{err:?}");
    raw_cmd(&mut rig.raw, &["CONFIG", "SET", "maxmemory", "0"]).await;
    let out = rig.store.ack(owner.on(Q), &ack).await.unwrap();
    assert!(out[0].pushed && out[0].claim_dropped, "{out:?}");
}
