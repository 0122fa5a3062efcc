//! Checks of the return paths other than reclaim: release (the shutdown sweep's too), retry parking and promotion, dead letters.

use super::StoreFactory;
use super::support::{Fixture, Q, Req, T0, config, fixture, limited, one_claimed, owner};
use crate::CheckedStore;
use claim_core::store::ClaimOutcome;
use claim_core::types::{Member, Score};
use claim_core::wire;
use claim_core::{ClaimInspect, ClaimStore};

pub(super) fn redeliveries(outcome: &ClaimOutcome) -> Option<u32> {
    match outcome {
        ClaimOutcome::Claimed { redeliveries, .. } => Some(*redeliveries),
        _ => None,
    }
}

pub(super) async fn park<S: CheckedStore>(
    fx: &Fixture<S>,
    who: &str,
    r: &Req,
    due_in: u64,
) -> Vec<bool> {
    let stamped = wire::stamp_retry(r.member.as_bytes(), Q).expect("stamp");
    fx.park_as(who, r, stamped, due_in).await
}

pub async fn release_returns_a_claim_to_pending_at_its_original_score(f: &impl StoreFactory) {
    let (fx, r) = one_claimed(f, "w1", 3600).await;
    assert_eq!(fx.release("w1", r.one()).await, vec![true]);
    let pending = fx.store.peek(Q, 0, 10).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].member.clone(), pending[0].score),
        (r.member.clone(), Score(r.deadline as f64))
    );
    assert_eq!(fx.depths().await.claimed, 0);
    assert_eq!(
        redeliveries(&fx.claim("w2", &[r]).await[0]),
        Some(0),
        "a release is not a delivery"
    );
}

pub async fn release_by_a_non_owner_changes_nothing(f: &impl StoreFactory) {
    let (fx, r) = one_claimed(f, "w1", 3600).await;
    assert_eq!(fx.release("w2", r.one()).await, vec![false]);
    assert!(fx.pending().await.is_empty());
    assert_eq!(fx.store.claims(Q).await.unwrap()[0].owner, owner("w1"));
}

/// What the runtime's shutdown sweep does: one release of every claim
/// still held.
pub async fn a_release_of_a_whole_batch_returns_every_claim_in_order_without_counting_a_delivery(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let rs = fx.claim_batch("w1", 3).await;
    let gens: Vec<_> = rs.iter().map(|r| r.generation.clone()).collect();
    assert_eq!(
        fx.store.release(owner("w1").on(Q), &gens).await.unwrap(),
        vec![true; 3]
    );
    let members: Vec<_> = rs.iter().map(|r| r.member.clone()).collect();
    assert_eq!(fx.pending().await, members);
    let again = fx.claim("w2", &rs).await;
    assert!(again.iter().all(|o| redeliveries(o) == Some(0)));
}

pub async fn park_retry_moves_the_claim_into_the_retry_set_and_nowhere_else(f: &impl StoreFactory) {
    let (fx, r) = one_claimed(f, "w1", 3600).await;
    assert_eq!(park(&fx, "w1", &r, 10).await, vec![true]);
    let d = fx.depths().await;
    assert_eq!(
        (d.pending, d.claimed),
        (0, 0),
        "no claim kept beside the parked copy"
    );
    let parked = fx.store.retry_entries().await.unwrap();
    assert_eq!(parked.len(), 1);
    assert_eq!(parked[0].score, fx.at(10).as_score());
    let p = wire::parse_member(parked[0].member.as_bytes()).unwrap();
    assert_eq!(
        (p.retry_count, p.request_queue_name.as_deref()),
        (1, Some(Q))
    );
    fx.clock.set(fx.at(100));
    assert_eq!(
        fx.reclaim_all().await.redelivered,
        0,
        "a parked request has no lease to expire"
    );
}

pub async fn park_retry_by_a_non_owner_is_refused(f: &impl StoreFactory) {
    let (fx, r) = one_claimed(f, "w1", 3600).await;
    assert_eq!(park(&fx, "w2", &r, 10).await, vec![false]);
    assert_eq!(fx.store.retry_depth().await.unwrap(), 0);
    assert_eq!(fx.depths().await.claimed, 1);
}

pub async fn promote_due_returns_only_due_retries_at_their_deadline_score(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let soon = fx.req("soon", "t", 3600);
    let later = fx.req("later", "t", 1800);
    fx.submit(&[soon.clone(), later.clone()]).await;
    fx.claim("w1", &[soon.clone(), later.clone()]).await;
    park(&fx, "w1", &soon, 10).await;
    park(&fx, "w1", &later, 60).await;
    fx.clock.set(fx.at(5));
    assert_eq!(fx.store.promote_due(100).await.unwrap(), 0);
    fx.clock.set(fx.at(10));
    assert_eq!(fx.store.promote_due(100).await.unwrap(), 1);
    let pending = fx.store.peek(Q, 0, 10).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        pending[0].score,
        Score(soon.deadline as f64),
        "back at the deadline, not the due time"
    );
    assert_eq!(fx.store.retry_depth().await.unwrap(), 1);
    fx.clock.set(fx.at(60));
    assert_eq!(fx.store.promote_due(100).await.unwrap(), 1);
    let order: Vec<_> = fx
        .store
        .peek(Q, 0, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.score)
        .collect();
    assert_eq!(
        order,
        vec![Score(later.deadline as f64), Score(soon.deadline as f64)]
    );
}

/// A pool gate's refusal (or a wait past its bound) requeues: parked due
/// now with `wire::stamp_requeue`, so it is back at once, at its deadline
/// score, its retry count kept (the outcome table's pool-gate row).
pub async fn a_requeue_parked_due_now_is_pending_again_at_once_with_its_retry_count_kept(
    f: &impl StoreFactory,
) {
    let (fx, r) = one_claimed(f, "w1", 3600).await;
    let stamped = wire::stamp_requeue(r.member.as_bytes(), Q).expect("stamp");
    assert_eq!(fx.park_as("w1", &r, stamped, 0).await, vec![true]);
    assert_eq!(fx.store.promote_due(100).await.unwrap(), 1);
    let pending = fx.store.peek(Q, 0, 10).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].score, Score(r.deadline as f64));
    let p = wire::parse_member(pending[0].member.as_bytes()).unwrap();
    assert_eq!(p.retry_count, 0, "a requeue is not a retry");
    assert_eq!(fx.depths().await.claimed, 0);
}

pub async fn promote_due_moves_go_parked_entries_to_their_named_queue(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let deadline = T0.0 / 1000 + 900;
    let go_parked = format!(
        r#"{{"internal":{{"retry_count":2,"request_queue_name":"other-queue","request_token":"g"}},"request_kind":"redis","data":{{"id":"go","deadline":{deadline},"payload":{{}}}}}}"#
    );
    let unnamed = format!(
        r#"{{"request_kind":"plain","data":{{"id":"plain","deadline":{deadline},"payload":{{}}}}}}"#
    );
    // The trait has no raw write to the retry set, so a carrier claim is
    // parked with the foreign member: promotion must go by the member alone.
    let carrier = fx.req("carrier", "t", 3600);
    for (member, due) in [(go_parked.clone(), 1), (unnamed.clone(), 2)] {
        fx.submit_and_claim("w1", &carrier).await;
        let parked = fx.park_as("w1", &carrier, member.into_bytes(), due).await;
        assert_eq!(parked, vec![true]);
    }
    fx.clock.set(fx.at(3));
    assert_eq!(fx.store.promote_due(100).await.unwrap(), 2);
    let other = fx.store.peek("other-queue", 0, 10).await.unwrap();
    assert_eq!(other.len(), 1);
    assert_eq!(
        (other[0].member.as_bytes(), other[0].score),
        (go_parked.as_bytes(), Score(deadline as f64))
    );
    let default_queue = fx.store.config().default_queue.clone();
    let fallback = fx.store.peek(&default_queue, 0, 10).await.unwrap();
    assert!(
        fallback
            .iter()
            .any(|e| e.member.as_bytes() == unnamed.as_bytes()),
        "no queue name: default queue"
    );
}

pub async fn earliest_deadline_first_is_restored_on_every_return_to_pending(f: &impl StoreFactory) {
    let fx = fixture(f, limited(0)).await;
    let rs = fx.reqs(6);
    fx.submit(&rs).await;
    fx.claim("w1", &[rs[0].clone(), rs[2].clone(), rs[4].clone()])
        .await;
    fx.release("w1", &rs[4..5]).await;
    fx.release("w1", &rs[2..3]).await;
    fx.reclaim_at(31).await;
    let members: Vec<_> = rs.iter().map(|r| r.member.clone()).collect();
    assert_eq!(fx.pending().await, members);
}

pub async fn dead_letter_moves_an_unparsable_member_with_its_reason(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let garbage = Req {
        member: Member::from("{not json"),
        ..fx.req("g", "t", 60)
    };
    fx.submit(garbage.one()).await;
    let moved = fx
        .store
        .dead_letter(Q, &garbage.member, "member is not JSON")
        .await
        .unwrap();
    assert!(moved);
    assert!(fx.pending().await.is_empty());
    let dead = fx.store.dead_entries(Q).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (dead[0].member.clone(), dead[0].reason.as_str()),
        (garbage.member, "member is not JSON")
    );
    assert_eq!(dead[0].at, T0);
}

pub async fn dead_letter_of_a_member_no_longer_pending_is_refused(f: &impl StoreFactory) {
    let (fx, r) = one_claimed(f, "w1", 60).await;
    assert!(!fx.store.dead_letter(Q, &r.member, "late").await.unwrap());
    assert_eq!(
        fx.depths().await.dead,
        0,
        "a claimed member is never dead-lettered behind its owner"
    );
}

super::checks! {
    clock_free:
        release_returns_a_claim_to_pending_at_its_original_score,
        release_by_a_non_owner_changes_nothing,
        a_release_of_a_whole_batch_returns_every_claim_in_order_without_counting_a_delivery,
        park_retry_by_a_non_owner_is_refused,
        dead_letter_of_a_member_no_longer_pending_is_refused;
    clocked:
        park_retry_moves_the_claim_into_the_retry_set_and_nowhere_else,
        promote_due_returns_only_due_retries_at_their_deadline_score,
        a_requeue_parked_due_now_is_pending_again_at_once_with_its_retry_count_kept,
        promote_due_moves_go_parked_entries_to_their_named_queue,
        earliest_deadline_first_is_restored_on_every_return_to_pending,
        dead_letter_moves_an_unparsable_member_with_its_reason;
}
