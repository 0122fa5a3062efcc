//! The delivery count a Go processor's answer leaves in `<q>:deliveries`: what stays, and the bound on it.
//!
//! Our reclaimer keeps the count of a redelivered generation in
//! `<q>:deliveries` until one of ours claims it again. A claim-enabled Go
//! processor that claims and answers that generation instead never touches
//! the hash, so the entry stays. It is not dropped by the reclaimer: telling
//! a leftover from the count of a generation that is pending or parked needs
//! the generation's member (pending and the retry set are keyed by member
//! bytes, not by generation), which means scanning both sets; see
//! `docs/OPERATIONS.md` ("Beside claim-enabled Go processors") for the
//! bound these tests pin: one entry per generation Go answered after our
//! redelivery, keyed by that generation alone, so it never counts for
//! another one.

mod common;

use claim_core::store::{ClaimOutcome, ClaimRequest};
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, OwnerToken};
use claim_redis::testing::go::{self, GoQueue};
use redis::AsyncCommands;
use std::collections::HashMap;

const QUEUE: &str = "q";
const LIST: &str = "result-list";
const DEADLINE: i64 = common::T0_S + 3600;

fn request(id: &str, token: &str) -> ClaimRequest {
    common::submission(id, token, DEADLINE).claim_request()
}

async fn deliveries(rig: &mut common::Rig) -> HashMap<String, u32> {
    let key = rig.store.keys().queue(QUEUE).deliveries;
    rig.raw.hgetall(key).await.unwrap()
}

/// `r` submitted, claimed by one of ours that dies, and redelivered by our
/// reclaimer once its lease expired: back in pending with count 1.
async fn redelivered_by_us(rig: &mut common::Rig, r: &ClaimRequest) {
    let sub = common::submission(&r.generation.id, &r.generation.token, DEADLINE);
    rig.store.submit(QUEUE, &sub).await.unwrap();
    let dead = OwnerToken::new("dead");
    let out = rig.store.claim(dead.on(QUEUE), std::slice::from_ref(r));
    assert!(matches!(
        out.await.unwrap()[0],
        ClaimOutcome::Claimed { .. }
    ));
    rig.clock.set(common::T0.plus(31_000));
    let report = rig.store.reclaim_expired(QUEUE, 100).await.unwrap();
    assert_eq!(report.redelivered, 1);
}

/// Claims `r` as `w`, which must take it with `redeliveries` earlier
/// deliveries counted.
async fn claimed_after(rig: &mut common::Rig, r: &ClaimRequest, redeliveries: u32) {
    let w = OwnerToken::new("w");
    let out = rig.store.claim(w.on(QUEUE), std::slice::from_ref(r));
    let out = out.await.unwrap();
    assert!(
        matches!(out[0], ClaimOutcome::Claimed { redeliveries: n, .. } if n == redeliveries),
        "{out:?}"
    );
}

/// A Go processor claims `r` from pending and answers it.
async fn answered_by_go(rig: &mut common::Rig, r: &ClaimRequest) {
    let gq = GoQueue::new(rig.store.keys().queue(QUEUE));
    let key = format!("{}\0{}", r.generation.id, r.generation.token);
    let owner = go::owner_token();
    let won = gq.claim(
        &mut rig.raw,
        r.member.as_bytes(),
        &key,
        &owner,
        common::T0_S + 400,
    );
    assert!(won.await.unwrap(), "Go wins the pending member");
    let record = go::record(&r.generation.id, &r.generation.token, 200, "ok");
    let list = rig.store.keys().list(LIST);
    let pushed = gq.ack(&mut rig.raw, &list, &key, &owner, &record).await;
    assert!(pushed.unwrap(), "Go's owner-checked ack pushes");
}

#[tokio::test]
async fn a_count_left_by_a_go_answer_stays_one_entry_that_reclaims_neither_grow_nor_apply() {
    let mut rig = rig_or_skip!();
    let r = request("a", "t1");
    redelivered_by_us(&mut rig, &r).await;
    answered_by_go(&mut rig, &r).await;
    let leftover = HashMap::from([("a\0t1".to_owned(), 1)]);
    assert_eq!(
        deliveries(&mut rig).await,
        leftover,
        "Go's ack does not know our hash: the count stays"
    );
    let d = rig.store.depths(QUEUE).await.unwrap();
    assert_eq!((d.pending, d.claimed, d.dead), (0, 0, 0));

    // Later reclaimer passes neither grow it nor act on it.
    rig.clock.set(common::T0.plus(400_000));
    let report = rig.store.reclaim_expired(QUEUE, 100).await.unwrap();
    assert_eq!(
        (
            report.redelivered,
            report.dead_lettered,
            report.ghosts_repaired
        ),
        (0, 0, 0)
    );
    assert_eq!(deliveries(&mut rig).await, leftover);

    // A resubmission of the id is a new generation: its own count is 0.
    let next = request("a", "t2");
    let sub = common::submission("a", "t2", DEADLINE);
    rig.store.submit(QUEUE, &sub).await.unwrap();
    claimed_after(&mut rig, &next, 0).await;
    assert_eq!(deliveries(&mut rig).await, leftover, "still the one entry");
}

#[tokio::test]
async fn leftover_counts_are_one_per_generation_go_answered_after_our_redelivery() {
    let mut rig = rig_or_skip!();
    let by_go: Vec<ClaimRequest> = (0..3).map(|i| request(&format!("g{i}"), "t")).collect();
    let by_us = request("ours", "t");
    for r in by_go.iter().chain([&by_us]) {
        rig.clock.set(common::T0);
        redelivered_by_us(&mut rig, r).await;
    }
    for r in &by_go {
        answered_by_go(&mut rig, r).await;
    }
    // Ours claims its generation again: the count moves into the claim.
    claimed_after(&mut rig, &by_us, 1).await;
    let mut left: Vec<String> = deliveries(&mut rig).await.into_keys().collect();
    left.sort();
    assert_eq!(left, vec!["g0\0t", "g1\0t", "g2\0t"]);
}
