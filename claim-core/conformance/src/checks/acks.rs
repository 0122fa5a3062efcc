//! Checks of ack: first terminal record wins, owner-checked claim drop, producer keys, FIFO results.

use super::StoreFactory;
use super::support::{Q, RESULTS, config, fixture, one_answered, one_claimed, owner};
use claim_core::Record;
use claim_core::store::{AckItem, AckOutcome, ClaimOutcome, RenewOutcome};
use claim_core::wire::{ErrorCode, ResultRecord};
use claim_core::{ClaimInspect, ClaimStore};
use claim_core::{ClaimProducer, ListReads};

/// An ack outcome that pushed a record or not and dropped the claim or
/// not, and dead-lettered nothing.
pub(super) fn pushed_dropped(pushed: bool, claim_dropped: bool) -> AckOutcome {
    AckOutcome {
        pushed,
        claim_dropped,
        ..AckOutcome::default()
    }
}

pub async fn ack_pushes_the_record_writes_the_marker_and_drops_the_claim(f: &impl StoreFactory) {
    let (fx, r) = one_claimed(f, "w1", 3600).await;
    assert!(!fx.store.is_terminal(&r.generation).await.unwrap());
    let out = fx.ack("w1", r.one(), "hello").await;
    assert_eq!(out, vec![pushed_dropped(true, true)]);
    let records = fx.store.results(RESULTS).await.unwrap();
    assert_eq!(
        records,
        vec![r.record("hello")],
        "the record is pushed byte for byte"
    );
    assert!(fx.store.is_terminal(&r.generation).await.unwrap());
    assert_eq!(fx.depths().await.claimed, 0);
    assert!(fx.store.claims(Q).await.unwrap().is_empty());
}

pub async fn acking_twice_pushes_exactly_one_record(f: &impl StoreFactory) {
    let (fx, r) = one_answered(f, "first").await;
    // A retried ack after an indeterminate error must be harmless.
    let again = fx.ack("w1", r.one(), "second").await;
    assert_eq!(again, vec![pushed_dropped(false, false)]);
    let results = fx.results().await;
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["payload"], "first");
}

pub async fn ack_by_a_non_owner_pushes_the_first_record_but_keeps_the_owners_claim(
    f: &impl StoreFactory,
) {
    let (fx, r) = one_claimed(f, "owner", 3600).await;
    let out = fx.ack("stranger", r.one(), "from stranger").await;
    assert_eq!(out, vec![pushed_dropped(true, false)]);
    assert_eq!(
        fx.depths().await.claimed,
        1,
        "only the owner drops its claim"
    );
    let owners = fx.ack("owner", r.one(), "from owner").await;
    assert_eq!(owners, vec![pushed_dropped(false, true)]);
    let results = fx.results().await;
    assert_eq!(results.len(), 1);
    assert_eq!(
        results[0]["payload"], "from stranger",
        "first terminal record wins"
    );
}

pub async fn ack_after_the_lease_was_lost_still_delivers_exactly_one_record(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let r = fx.req("a", "t", 3600);
    fx.lapse("slow", &r).await;
    fx.claim("fast", r.one()).await;
    assert_eq!(fx.renew("slow", r.one()).await, vec![RenewOutcome::Lost]);
    // The slow owner had already produced its result: it is still offered.
    let late = fx.ack("slow", r.one(), "slow result").await;
    assert_eq!(late, vec![pushed_dropped(true, false)]);
    let fast = fx.ack("fast", r.one(), "fast result").await;
    assert_eq!(fast, vec![pushed_dropped(false, true)]);
    fx.assert_answered_once("a").await;
}

pub async fn ack_clears_producer_keys_only_for_its_own_generation(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let old = fx.req("a", "old", 3600);
    fx.submit_and_claim("w1", &old).await;
    let new = fx.req("a", "new", 3600);
    fx.submit(new.one()).await;
    fx.ack("w1", old.one(), "old done").await;
    assert!(
        fx.store.cancel("a").await.unwrap(),
        "the new generation is still active"
    );
    let out = fx.claim("w1", new.one()).await;
    assert!(matches!(
        out[0],
        ClaimOutcome::Claimed {
            cancelled: true,
            ..
        }
    ));
    fx.ack("w1", new.one(), "cancelled").await;
    assert!(
        !fx.store.cancel("a").await.unwrap(),
        "the ack cleared its own generation's keys"
    );
}

pub async fn results_come_out_oldest_first(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let rs = fx.claim_batch("w1", 5).await;
    for r in [&rs[3], &rs[0], &rs[4]] {
        fx.ack("w1", std::slice::from_ref(r), "x").await;
    }
    fx.ack("w1", &[rs[2].clone(), rs[1].clone()], "x").await;
    assert_eq!(fx.result_ids().await, vec!["r3", "r0", "r4", "r2", "r1"]);
}

pub async fn batch_operations_answer_item_by_item_in_order(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let rs = fx.reqs(4);
    fx.submit(&rs[..3]).await;
    fx.claim("other", &rs[1..2]).await;
    let out = fx.claim("w1", &rs).await;
    let shape: Vec<bool> = out
        .iter()
        .map(|o| matches!(o, ClaimOutcome::Claimed { .. }))
        .collect();
    assert_eq!(shape, vec![true, false, true, false]);
    let renewed = fx.renew("w1", &rs).await;
    let shape: Vec<bool> = renewed.iter().map(|o| *o != RenewOutcome::Lost).collect();
    assert_eq!(shape, vec![true, false, true, false]);
    let items: Vec<AckItem> = rs.iter().map(|r| r.ack_item(RESULTS, "b")).collect();
    let acked = fx.store.ack(owner("w1").on(Q), &items).await.unwrap();
    let dropped: Vec<bool> = acked.iter().map(|a| a.claim_dropped).collect();
    assert_eq!(dropped, vec![true, false, true, false]);
    let pushed: Vec<bool> = acked.iter().map(|a| a.pushed).collect();
    assert_eq!(
        pushed,
        vec![true, true, true, false],
        "every submitted generation gets its first record; one never submitted is nobody's to answer"
    );
    assert!(fx.store.is_terminal(&rs[1].generation).await.unwrap());
    assert!(!fx.store.is_terminal(&rs[3].generation).await.unwrap());
}

pub async fn a_repeated_ack_of_the_same_record_says_its_own_record_landed(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let r = fx.req("a", "t", 3600);
    let first = fx.answer("w1", &r, "answer").await;
    assert!(first[0].pushed && !first[0].own_record_landed);
    // The retry after an indeterminate error: the same record.
    let retried = fx.ack("w1", r.one(), "answer").await;
    assert_eq!(
        retried,
        vec![AckOutcome {
            own_record_landed: true,
            ..AckOutcome::default()
        }]
    );
    // Another worker's different record: a suppressed duplicate.
    let other = fx.ack("w2", r.one(), "other").await;
    assert_eq!(other, vec![AckOutcome::default()]);
    // Two items of one batch: the second sees the first's record.
    let s = fx.req("b", "t", 3600);
    fx.submit(s.one()).await;
    let both = fx.ack("w1", &[s.clone(), s.clone()], "same").await;
    assert!(both[0].pushed && !both[0].own_record_landed);
    assert!(!both[1].pushed && both[1].own_record_landed, "{both:?}");
}

pub async fn a_late_ack_of_a_generation_no_longer_anywhere_pushes_nothing_even_after_its_marker_expired(
    f: &impl StoreFactory,
) {
    let (fx, r) = one_claimed(f, "w1", 3600).await;
    let first = fx.ack("w1", r.one(), "first").await;
    assert_eq!(first, vec![pushed_dropped(true, true)]);
    // Past deadline + 30 s + the one-hour dedup TTL: the marker is gone.
    fx.clock.set(fx.at(3600 + 30 + 3600 + 1));
    assert!(!fx.store.is_terminal(&r.generation).await.unwrap());
    // Not claimed, not pending: answered already (or, beside Go
    // processors, held or answered by one, which writes no marker).
    let late = fx.ack("w2", r.one(), "late").await;
    assert_eq!(late, vec![pushed_dropped(false, false)]);
    assert_eq!(fx.result_ids().await, vec!["a"]);
    assert!(!fx.store.is_terminal(&r.generation).await.unwrap());
}

/// A gate's verdict that answers a request (a queue gate's drop: claimed,
/// then acked; a pool gate's drop or error: acked) is a terminal record
/// like any other: `GATE_DROPPED`, `GATE_ERROR` and the gate's own record
/// land byte for byte, once each, and their claims are gone (the outcome
/// table's gate rows).
pub async fn a_gate_verdicts_record_lands_byte_for_byte_once_and_drops_the_claim(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let rs = fx.claim_batch("w1", 3).await;
    let records = [
        ResultRecord::error("r0", ErrorCode::GateDropped, "Pool gating dropped request"),
        ResultRecord::error("r1", ErrorCode::GateError, "Pool gating error: quota down"),
        ResultRecord::success("r2", 0, r#"{"error": "Too Many Requests", "code": 429}"#),
    ];
    let items: Vec<AckItem> = rs
        .iter()
        .zip(&records)
        .map(|(r, record)| AckItem {
            record: Record::from(record.to_json_bytes()),
            ..r.ack_item(RESULTS, "")
        })
        .collect();
    let out = fx.store.ack(owner("w1").on(Q), &items).await.unwrap();
    assert_eq!(out, vec![pushed_dropped(true, true); 3]);
    let again = fx.store.ack(owner("w1").on(Q), &items).await.unwrap();
    assert!(again.iter().all(|o| !o.pushed && !o.claim_dropped));
    let landed = fx.store.results(RESULTS).await.unwrap();
    let sent: Vec<Record> = items.into_iter().map(|i| i.record).collect();
    assert_eq!(landed, sent, "each gate record lands once, byte for byte");
    for r in &rs {
        assert!(fx.store.is_terminal(&r.generation).await.unwrap());
    }
    assert!(fx.store.claims(Q).await.unwrap().is_empty());
    assert_eq!(fx.depths().await.pending, 0);
}

super::checks! {
    clock_free:
        ack_pushes_the_record_writes_the_marker_and_drops_the_claim,
        a_gate_verdicts_record_lands_byte_for_byte_once_and_drops_the_claim,
        acking_twice_pushes_exactly_one_record,
        ack_by_a_non_owner_pushes_the_first_record_but_keeps_the_owners_claim,
        ack_clears_producer_keys_only_for_its_own_generation,
        results_come_out_oldest_first,
        batch_operations_answer_item_by_item_in_order,
        a_repeated_ack_of_the_same_record_says_its_own_record_landed;
    clocked:
        ack_after_the_lease_was_lost_still_delivers_exactly_one_record,
        a_late_ack_of_a_generation_no_longer_anywhere_pushes_nothing_even_after_its_marker_expired;
}
