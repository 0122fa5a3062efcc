//! Members whose score or deadline is out of range (9223372036854775807, ±inf, 1e300, negative) on a real server: one record each, nothing left claimed, no reclaim scan stopped (issue 17).
//!
//! Whoever writes to a queue chooses the score and every byte of the
//! member. A score or deadline that once made a marker's `SET … PX`
//! overflow after the `LPUSH` left a record without a marker and the claim
//! in place (a duplicate on every redelivery, a reclaim failing on its head
//! entry forever). Leases and markers now follow the member's deadline,
//! clamped, and every script checks its numbers before its first write.

mod common;

use claim_core::ListReads;
use claim_core::store::{AckItem, ClaimOutcome, ClaimRequest, StoreConfig};
use claim_core::wire::ResultRecord;
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, Generation, Member, Millis, OwnerToken};
use claim_redis::RedisStore;
use common::{T0, T0_S};
use redis::AsyncCommands;

const Q: &str = "q";
const LIST: &str = "result-list";

/// A member of `id` due at `deadline` (Unix seconds, as JSON text: any
/// number a producer may write).
fn member(id: &str, deadline: &str) -> Member {
    let json = format!(
        r#"{{"internal":{{"request_token":"t"}},"request_kind":"redis","data":{{"id":"{id}","created":0,"deadline":{deadline},"payload":{{"p":1}}}}}}"#
    );
    Member::from(json.into_bytes())
}

/// ZADDs `member` to the store's pending set at `score` (Redis's text:
/// `+inf`, `-inf`, `9223372036854775807`), as a hostile producer would.
async fn zadd(rig: &mut common::Rig, member: &Member, score: &str) {
    let pending = rig.store.keys().queue(Q).pending;
    let _: () = redis::cmd("ZADD")
        .arg(&pending)
        .arg(score)
        .arg(member.as_bytes())
        .query_async(&mut rig.raw)
        .await
        .unwrap();
}

/// Claims `members` for `owner`; every one must be claimed. Answers the
/// ack items the runtime would send: the score the claim answered.
async fn claim_all(
    store: &RedisStore,
    owner: &OwnerToken,
    members: &[(&str, Member)],
) -> Vec<AckItem> {
    let items: Vec<ClaimRequest> = members
        .iter()
        .map(|(id, m)| ClaimRequest {
            member: m.clone(),
            generation: Generation::new(*id, "t"),
        })
        .collect();
    let out = store.claim(owner.on(Q), &items).await.unwrap();
    items
        .iter()
        .zip(out)
        .map(|(item, outcome)| {
            let ClaimOutcome::Claimed { score, .. } = outcome else {
                panic!("{} is claimed, got {outcome:?}", item.generation);
            };
            AckItem {
                generation: item.generation.clone(),
                member: item.member.clone(),
                score,
                result_list: LIST.to_owned(),
                record: ResultRecord::success(&item.generation.id, 200, "done")
                    .to_json_bytes()
                    .into(),
                payload_ref: None,
                result_ttl_seconds: 0,
            }
        })
        .collect()
}

/// Every generation got exactly one record, and nothing is claimed.
async fn one_record_each(rig: &mut common::Rig, ids: &[&str]) {
    let records = rig.store.results(LIST).await.unwrap();
    let mut got: Vec<String> = records
        .iter()
        .map(|r| {
            let v: serde_json::Value = serde_json::from_slice(r.as_bytes()).unwrap();
            v["id"].as_str().unwrap().to_owned()
        })
        .collect();
    got.sort();
    let mut want: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(got, want, "exactly one record per generation");
    assert_eq!(
        rig.store.depths(Q).await.unwrap().claimed,
        0,
        "nothing left claimed"
    );
}

/// The expiry (ms) `generation`'s marker holds; Redis keeps the key with an
/// expiry of its own (PX set, not overflowed).
async fn marker_expiry_ms(rig: &mut common::Rig, generation: &Generation) -> u64 {
    let key = rig.store.keys().marker(generation);
    let ttl: i64 = rig.raw.pttl(&key).await.unwrap();
    assert!(
        ttl > 0,
        "the marker of {generation} has an expiry, got {ttl}"
    );
    let value: String = rig.raw.get(&key).await.unwrap();
    let (expiry, _digest) = value.split_once(':').expect("<expiry>:<digest>");
    expiry.parse().unwrap()
}

#[tokio::test]
async fn a_member_whose_deadline_and_score_are_9223372036854775807_gets_one_record_and_leaves_nothing_claimed()
 {
    let mut rig = rig_or_skip!();
    let owner = OwnerToken::new("w1");
    let max = "9223372036854775807";
    let huge = member("huge", max);
    let far = member("far", &(T0_S + 86_400).to_string());
    let inf = member("inf", &(T0_S + 3600).to_string());
    let low = member("low", &(T0_S + 3600).to_string());
    zadd(&mut rig, &huge, max).await;
    zadd(&mut rig, &far, max).await;
    zadd(&mut rig, &inf, "+inf").await;
    zadd(&mut rig, &low, "-inf").await;
    let all = [("huge", huge), ("far", far), ("inf", inf), ("low", low)];
    let items = claim_all(&rig.store, &owner, &all).await;
    let out = rig.store.ack(owner.on(Q), &items).await.unwrap();
    assert!(out.iter().all(|o| o.pushed && o.claim_dropped), "{out:?}");
    one_record_each(&mut rig, &["huge", "far", "inf", "low"]).await;
    // The owner's ack leaves no other copy: every marker lives the dedup
    // TTL (1 h) past now, whatever the deadline or the score, with an
    // expiry Redis took (PX set, not overflowed).
    let dedup = common::config().result_dedup_ttl_ms;
    for id in ["huge", "far", "inf", "low"] {
        let at = marker_expiry_ms(&mut rig, &Generation::new(id, "t")).await;
        assert_eq!(at, T0.0 + dedup, "{id}");
    }
    // A second ack (a redelivery's) is suppressed by the markers.
    let again = rig.store.ack(owner.on(Q), &items).await.unwrap();
    assert!(again.iter().all(|o| !o.pushed));
    one_record_each(&mut rig, &["huge", "far", "inf", "low"]).await;
}

#[tokio::test]
async fn reclaim_with_an_infinite_score_at_the_head_of_the_expired_index_still_returns_the_other_claims()
 {
    let config = StoreConfig {
        max_deliveries: 1,
        ..common::config()
    };
    let Some(server) = common::server(Default::default()) else {
        return;
    };
    let url = server.url();
    let (store, clock) = common::manual_store(&url, config).await;
    let mut rig = common::Rig {
        raw: common::raw(&url).await,
        url,
        store,
        clock,
        server,
    };
    let owner = OwnerToken::new("dies");
    let max = "9223372036854775807";
    // Claimed first, so its lease is the index's head; each goes to the
    // delivery limit (1) when its lease lapses: a DELIVERY_LIMIT record.
    let head = member("head", max);
    zadd(&mut rig, &head, "+inf").await;
    claim_all(&rig.store, &owner, &[("head", head)]).await;
    rig.clock.advance(1);
    let mut rest = Vec::new();
    for (i, score) in ["inf", "-inf", max].iter().enumerate() {
        let id = format!("r{i}");
        let m = member(&id, &(T0_S + 3600).to_string());
        zadd(&mut rig, &m, score).await;
        rest.push((id, m));
    }
    let rest_refs: Vec<(&str, Member)> = rest
        .iter()
        .map(|(id, m)| (id.as_str(), m.clone()))
        .collect();
    claim_all(&rig.store, &owner, &rest_refs).await;
    rig.clock.set(T0.plus(31_000));
    let mut dead = 0;
    loop {
        let report = rig
            .store
            .reclaim_expired(Q, 2)
            .await
            .expect("no error stops the scan");
        dead += report.dead_lettered;
        if !report.more {
            break;
        }
    }
    assert_eq!(
        dead, 4,
        "every lapsed claim reached its limit, the head first"
    );
    one_record_each(&mut rig, &["head", "r0", "r1", "r2"]).await;
    for id in ["head", "r0", "r1", "r2"] {
        marker_expiry_ms(&mut rig, &Generation::new(id, "t")).await;
    }
    let again = rig.store.reclaim_expired(Q, 10).await.unwrap();
    assert_eq!((again.redelivered, again.dead_lettered), (0, 0));
}

#[tokio::test]
async fn claim_and_renew_read_every_odd_deadline_as_claim_core_does() {
    let mut rig = rig_or_skip!();
    let owner = OwnerToken::new("w1");
    // Past: its cap (deadline + 30 s) binds before now + TTL does.
    let near = T0_S - 5;
    // data.deadline as a producer may write it: each lease must be
    // lease_expiry(now, ttl, wire::member_deadline(member)), whether the
    // Rust caller read it (claim) or the script did (renew).
    let deadlines = [
        near.to_string(),
        format!("{near}.9"),
        format!("\"{near}\""),
        "null".to_owned(),
        "0".to_owned(),
        "-5".to_owned(),
        "1e300".to_owned(),
        "253402300799".to_owned(),
        "253402300800".to_owned(),
        format!("{near}, \"deadline\": {}", near + 3),
        format!("{near}e0"),
        "[1]".to_owned(),
    ];
    let members: Vec<(String, Member)> = deadlines
        .iter()
        .enumerate()
        .map(|(i, d)| (format!("odd{i}"), member(&format!("odd{i}"), d)))
        .collect();
    for (_, m) in &members {
        zadd(&mut rig, m, "0").await;
    }
    let refs: Vec<(&str, Member)> = members
        .iter()
        .map(|(id, m)| (id.as_str(), m.clone()))
        .collect();
    claim_all(&rig.store, &owner, &refs).await;
    let ttl = common::config().lease_ttl_ms;
    let want = |now: Millis, m: &Member| {
        claim_core::lease::lease_expiry(now, ttl, claim_core::wire::member_deadline(m.as_bytes()))
    };
    let claims = rig.store.claims(Q).await.unwrap();
    for (id, m) in &members {
        let c = claims.iter().find(|c| c.generation.id == *id).unwrap();
        assert_eq!(
            c.lease_expiry,
            want(T0, m),
            "claim of {}",
            String::from_utf8_lossy(m.as_bytes())
        );
    }
    rig.clock.set(T0.plus(5_000));
    let gens: Vec<Generation> = members
        .iter()
        .map(|(id, _)| Generation::new(id, "t"))
        .collect();
    let renewed = rig.store.renew(owner.on(Q), &gens).await.unwrap();
    for ((_, m), outcome) in members.iter().zip(renewed) {
        let expected = claim_core::store::RenewOutcome::Renewed {
            lease_expiry: want(T0.plus(5_000), m),
        };
        assert_eq!(
            outcome,
            expected,
            "renew of {}",
            String::from_utf8_lossy(m.as_bytes())
        );
    }
}

#[tokio::test]
async fn a_submit_due_at_9223372036854775807_writes_every_key_with_an_expiry() {
    let mut rig = rig_or_skip!();
    let s = claim_core::store::Submission {
        member: member("far", &i64::MAX.to_string()),
        generation: Generation::new("far", "t"),
        deadline: i64::MAX,
        payload: Some(claim_core::Payload::from(b"{\"p\":1}".to_vec())),
    };
    rig.store
        .submit(Q, &s)
        .await
        .expect("the MULTI lands whole");
    let keys = rig.store.keys().clone();
    for key in [keys.active("far"), keys.payload(&s.payload_key())] {
        let ttl: i64 = rig.raw.pttl(&key).await.unwrap();
        assert!(ttl > 0, "{key} is written with an expiry, got {ttl}");
    }
    assert_eq!(rig.store.depths(Q).await.unwrap().pending, 1);
}

#[tokio::test]
async fn a_repaired_index_entry_of_a_member_scored_zero_gets_the_lease_its_deadline_allows() {
    let mut rig = rig_or_skip!();
    let owner = OwnerToken::new("w1");
    let m = member("zero", &(T0_S + 3600).to_string());
    zadd(&mut rig, &m, "0").await;
    claim_all(&rig.store, &owner, &[("zero", m)]).await;
    // The index entry goes missing (a flush, an operator): the reclaimer
    // repairs it with the lease a fresh claim would get.
    let index = rig.store.keys().queue(Q).index;
    let _: () = rig.raw.del(&index).await.unwrap();
    rig.clock.set(T0.plus(10_000));
    let report = rig.store.reclaim_expired(Q, 10).await.unwrap();
    assert_eq!((report.ghosts_repaired, report.redelivered), (1, 0));
    let claims = rig.store.claims(Q).await.unwrap();
    let ttl = common::config().lease_ttl_ms;
    assert_eq!(claims[0].lease_expiry, T0.plus(10_000 + ttl));
    let again = rig.store.reclaim_expired(Q, 10).await.unwrap();
    assert_eq!(again.redelivered, 0, "the repaired lease is live");
}
