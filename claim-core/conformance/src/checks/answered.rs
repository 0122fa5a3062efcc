//! Checks that no path returns an answered generation to pending: release (the shutdown sweep's too), admin release, retry parking and promotion each drop a claim (or entry) whose generation has a live marker.
//!
//! The state they start from: `w1` claims `a`, its lease lapses, the
//! reclaimer puts it back and `w2` claims it; `w1`'s stale ack then lands
//! (the generation is ours somewhere: first record wins) while `w2` still
//! holds the claim. Returned to pending, parked or promoted, the request
//! would be served again, and once its marker expired it would get a
//! second record. So each path ends `w2`'s claim with nothing left
//! anywhere, and the one record stays the only one. The request is stored
//! by reference: the stale ack left its payload to the holder `w2`, so a
//! path that ends `w2`'s claim without an ack deletes the payload key too
//! (nobody else would before it expires, ten minutes after the deadline).

use super::StoreFactory;
use super::payloads::{by_reference, stored, submission};
use super::returns::park;
use super::support::{Fixture, Q, Req, config, fixture, one_answered, owner};
use crate::CheckedStore;
use claim_core::admin::ClaimAdmin;
use claim_core::wire;
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore};

/// `a`, stored by reference, answered by `w1`'s stale ack while `w2`
/// holds its claim.
async fn answered_while_held<F: StoreFactory>(f: &F) -> (Fixture<F::Store>, Req) {
    let fx = fixture(f, config()).await;
    let (r, payload) = by_reference(fx.start, "a", 3600);
    fx.store.submit(Q, &submission(&r, payload)).await.unwrap();
    fx.claim("w1", r.one()).await;
    let report = fx.reclaim_at(31).await;
    assert_eq!(report.redelivered, 1, "{report:?}");
    fx.claim("w2", r.one()).await;
    let stale = fx.ack("w1", r.one(), "w1, stale").await;
    assert!(stale[0].pushed && !stale[0].claim_dropped, "{stale:?}");
    assert!(fx.store.is_terminal(&r.generation).await.unwrap());
    assert_eq!(fx.depths().await.claimed, 1, "w2 still holds it");
    assert!(stored(&fx.store, &r).await, "left to the holder");
    (fx, r)
}

/// Nothing of `r` is left anywhere (its payload key included), now or
/// after its marker expired, and its one record is the only one.
async fn nothing_left<S: CheckedStore>(fx: &Fixture<S>, r: &Req, path: &str) {
    assert!(
        !stored(&fx.store, r).await,
        "{path}: the holder that ends an answered claim deletes its payload"
    );
    let d = fx.depths().await;
    assert_eq!(
        (d.pending, d.claimed, d.dead),
        (0, 0, 0),
        "{path}: an answered generation is dropped, not returned"
    );
    assert_eq!(
        fx.store.retry_depth().await.unwrap(),
        0,
        "{path}: not parked"
    );
    assert_eq!(fx.reclaim_at(8000).await, Default::default(), "{path}");
    assert_eq!(fx.store.promote_due(10).await.unwrap(), 0, "{path}");
    assert!(fx.pending().await.is_empty(), "{path}");
    assert_eq!(fx.result_ids().await, vec!["a"], "{path}: one record");
}

pub async fn a_release_of_a_claim_whose_generation_was_answered_drops_it_instead_of_returning_it(
    f: &impl StoreFactory,
) {
    let (fx, r) = answered_while_held(f).await;
    assert_eq!(
        fx.release("w2", r.one()).await,
        vec![true],
        "w2's claim ended"
    );
    nothing_left(&fx, &r, "release").await;
}

pub async fn parking_a_claim_whose_generation_was_answered_drops_it_and_parks_nothing(
    f: &impl StoreFactory,
) {
    let (fx, r) = answered_while_held(f).await;
    assert_eq!(
        park(&fx, "w2", &r, 40).await,
        vec![true],
        "w2's claim ended"
    );
    nothing_left(&fx, &r, "park").await;
}

pub async fn a_due_retry_entry_whose_generation_was_answered_is_dropped_not_promoted(
    f: &impl StoreFactory,
) {
    let (fx, r) = one_answered(f, "done").await;
    // A parked copy of the answered generation (as a Go processor, or this
    // store before the marker check, could leave one): a carrier claim is
    // parked with its bytes, the trait having no raw write to the set.
    let carrier = fx.req("carrier", "t", 3600);
    fx.submit_and_claim("w1", &carrier).await;
    let stamped = wire::stamp_retry(r.member.as_bytes(), Q).expect("stamp");
    assert_eq!(fx.park_as("w1", &carrier, stamped, 10).await, vec![true]);
    fx.clock.set(fx.at(10));
    assert_eq!(
        fx.store.promote_due(10).await.unwrap(),
        1,
        "it leaves the retry set"
    );
    assert!(fx.pending().await.is_empty(), "and goes nowhere");
    assert_eq!(fx.store.retry_depth().await.unwrap(), 0);
    assert_eq!(fx.result_ids().await, vec!["a"]);
}

pub async fn an_admin_release_of_a_claim_whose_generation_was_answered_drops_it_instead_of_returning_it<
    F: StoreFactory,
>(
    f: &F,
) where
    F::Store: ClaimAdmin,
{
    let (fx, r) = answered_while_held(f).await;
    let released = fx.store.release_claim(Q, &r.generation).await.unwrap();
    assert_eq!(released, Some(owner("w2")), "w2's claim ended");
    nothing_left(&fx, &r, "admin release").await;
}

super::checks! {
    clocked:
        a_release_of_a_claim_whose_generation_was_answered_drops_it_instead_of_returning_it,
        parking_a_claim_whose_generation_was_answered_drops_it_and_parks_nothing,
        a_due_retry_entry_whose_generation_was_answered_is_dropped_not_promoted;
}

super::admin_checks! {
    admin:
        an_admin_release_of_a_claim_whose_generation_was_answered_drops_it_instead_of_returning_it;
}
