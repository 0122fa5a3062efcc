//! Counters mean one thing: a suppressed duplicate result, a pending duplicate dropped at claim time and an own retried ack that had landed are told apart.

#[path = "common/faulty.rs"]
mod faulty;
#[path = "common/memory_rig.rs"]
mod rig;

use claim_core::ClaimInspect;
use claim_core::ClaimStore;
use claim_core::store::{AckItem, ClaimOutcome, ClaimRequest};
use claim_core::wire::ResultRecord;
use claim_core::{Generation, OwnerToken};
use rig::*;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn an_ack_resent_after_an_uncertain_attempt_that_landed_counts_as_landed_not_as_a_suppressed_duplicate()
 {
    let s = setup();
    s.store
        .faults
        .acks_landing_unanswered
        .store(1, Ordering::SeqCst);
    submit(&s, A, "ok-1", RESULTS).await;
    let (token, handle) = start(runtime(&s, &[A]));
    records_within(&s, Duration::from_secs(2), "the record", 1).await;
    within(Duration::from_secs(2), "the resend", async || {
        s.store.ack_calls.load(Ordering::SeqCst) >= 2
    })
    .await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(answered(&s, RESULTS).await, vec!["ok-1".to_owned()]);
    assert_eq!(
        (report.retried_acks_landed, report.duplicates_suppressed),
        (1, 0),
        "{report:?}"
    );
    assert_eq!(s.memory.depths(A).await.unwrap().claimed, 0);
}

#[tokio::test(start_paused = true)]
async fn a_pending_copy_of_an_answered_generation_is_counted_as_dropped_at_claim_not_as_a_suppressed_result()
 {
    let s = setup();
    submit(&s, A, "dup-1", RESULTS).await;
    // Another owner answers the generation first, and a stale copy of the
    // member is pending again (as after a reclaim racing a late ack).
    let other = OwnerToken::new("other-owner");
    let generation = Generation::new("dup-1", "tok-dup-1");
    let member = s.memory.peek(A, 0, 1).await.unwrap()[0].member.clone();
    let claim = ClaimRequest {
        member: member.clone(),
        generation: generation.clone(),
    };
    let claimed = s.memory.claim(other.on(A), &[claim]).await.unwrap();
    let ClaimOutcome::Claimed { score, .. } = claimed[0] else {
        panic!("the first claim takes the member: {claimed:?}");
    };
    let record = ResultRecord::success("dup-1", 200, "first");
    let ack = AckItem {
        generation,
        member,
        score,
        result_list: RESULTS.into(),
        record: record.to_json_bytes().into(),
        payload_ref: None,
        result_ttl_seconds: 0,
    };
    s.memory.ack(other.on(A), &[ack]).await.unwrap();
    submit(&s, A, "dup-1", RESULTS).await;

    let (token, handle) = start(runtime(&s, &[A]));
    within(
        Duration::from_secs(2),
        "the pending copy gone",
        async || s.memory.depths(A).await.unwrap().pending == 0,
    )
    .await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(
        (
            report.pending_duplicates_dropped,
            report.duplicates_suppressed
        ),
        (1, 0),
        "{report:?}"
    );
    assert_eq!(answered(&s, RESULTS).await, vec!["dup-1".to_owned()]);
}

#[tokio::test(start_paused = true)]
async fn an_ack_answered_dead_lettered_is_counted_as_dead_lettered_and_its_claim_let_go_while_the_others_are_answered()
 {
    let s = setup();
    *s.store.faults.dead_letter_acks_to.lock().unwrap() = Some(POISON_LIST.into());
    let (token, handle) = start_with_one_bad(&s, "poison", POISON_LIST, 10).await;
    within(
        Duration::from_secs(2),
        "every record and the dead entry",
        async || {
            answered(&s, RESULTS).await.len() == 10
                && s.memory.dead_entries(A).await.unwrap().len() == 1
        },
    )
    .await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(
        (
            report.dead_lettered,
            report.records_pushed,
            report.given_up,
            report.duplicates_suppressed
        ),
        (1, 10, 0, 0),
        "{report:?}"
    );
    assert_eq!(report.swept, 0, "no claim left to sweep");
    assert_pending_and_unclaimed(&s, A, 0).await;
    let dead = s.memory.dead_entries(A).await.unwrap();
    assert!(
        dead[0].reason.contains("holds a zset"),
        "{}",
        dead[0].reason
    );
}
