//! Checks of the operator's operations (`ClaimAdmin`): redrive, purge, release of any owner's claim, pause; and the races the admin CLI must survive.
//!
//! Each runs once per store (`admin::<check>`), not through faults: these
//! are operator commands, run once and reported, not retried by a client.

use super::StoreFactory;
use super::support::{Fixture, Q, Req, config, fixture, limited, one_claimed, owner};
use crate::CheckedStore;
use claim_core::ClaimProducer;
use claim_core::admin::{ClaimAdmin, Redrive};
use claim_core::store::{ClaimOutcome, RenewOutcome, StoreConfig, Submission};
use claim_core::types::{Generation, Member, Score};
use claim_core::{ClaimInspect, ClaimStore};

/// The queue whose pending set the checks' unusable result list is.
const BLOCKING_QUEUE: &str = "conformance-blocking-queue";

/// The suite's config with a delivery limit of 2 and, with `blocked`, the
/// queue's result list naming [`BLOCKING_QUEUE`] (unusable while that
/// queue holds a member: see [`block`]).
fn two_deliveries(blocked: bool) -> StoreConfig {
    let mut cfg = limited(2);
    if blocked {
        cfg.queue_result_lists
            .insert(Q.to_owned(), BLOCKING_QUEUE.to_owned());
    }
    cfg
}

fn blocker<S>(fx: &Fixture<S>) -> Req {
    fx.req("blocker", "t", 7200)
}

/// Makes the result list a zset: a member pending in [`BLOCKING_QUEUE`].
async fn block<S: CheckedStore>(fx: &Fixture<S>) {
    let s = blocker(fx).submission();
    fx.store.submit(BLOCKING_QUEUE, &s).await.unwrap();
}

/// The operator's fix: the blocking member claimed and answered, so the
/// result list key is gone.
async fn unblock<S: CheckedStore>(fx: &Fixture<S>) {
    let b = blocker(fx);
    let w = owner("fixer");
    let out = fx
        .store
        .claim(w.on(BLOCKING_QUEUE), &[b.claim_request()])
        .await
        .unwrap();
    assert!(matches!(out[0], ClaimOutcome::Claimed { .. }), "{out:?}");
    let item = b.ack_item("conformance-fix-results", "fixed");
    fx.store.ack(w.on(BLOCKING_QUEUE), &[item]).await.unwrap();
}

/// `r` lapses twice (the limit of [`two_deliveries`]): with the result list
/// blocked it lands in the dead set without a record; otherwise with its
/// `DELIVERY_LIMIT` record.
async fn to_the_limit<S: CheckedStore>(fx: &Fixture<S>, r: &Req) {
    fx.lapse("w1", r).await;
    fx.claim("w2", r.one()).await;
    let report = fx.reclaim_at(62).await;
    assert_eq!(report.dead_lettered, 1, "{report:?}");
}

/// Claims `r` (wherever it is pending) as `who` and acks it: the drain.
async fn serve<S: CheckedStore>(fx: &Fixture<S>, who: &str, r: &Req) -> Option<u32> {
    let out = fx.claim(who, r.one()).await;
    let ClaimOutcome::Claimed { redeliveries, .. } = out[0] else {
        return None;
    };
    fx.ack(who, r.one(), who).await;
    Some(redeliveries)
}

pub async fn redrive_moves_dead_entries_back_at_their_original_score_with_the_delivery_count_reset<
    F: StoreFactory,
>(
    f: &F,
) where
    F::Store: ClaimAdmin,
{
    let fx = fixture(f, two_deliveries(true)).await;
    block(&fx).await;
    let r = fx.req("a", "t", 3600);
    to_the_limit(&fx, &r).await;
    assert_eq!(fx.depths().await.dead, 1);
    assert!(fx.results().await.is_empty(), "no record yet");
    unblock(&fx).await;
    let moved = fx.store.redrive_dead(Q, r.member.one()).await.unwrap();
    assert_eq!(moved, vec![Redrive::Moved]);
    let pending = fx.store.peek(Q, 0, 10).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].member.clone(), pending[0].score),
        (r.member.clone(), Score(r.deadline as f64))
    );
    assert_eq!(fx.depths().await.dead, 0, "the dead entry is gone");
    assert_eq!(serve(&fx, "w3", &r).await, Some(0), "delivery count reset");
    assert_eq!(fx.result_ids().await, vec!["a"]);
    assert_eq!(
        fx.store.redrive_dead(Q, r.member.one()).await.unwrap(),
        vec![Redrive::NotDead]
    );
}

pub async fn redrive_leaves_answered_unparsable_and_missing_entries_where_they_are<
    F: StoreFactory,
>(
    f: &F,
) where
    F::Store: ClaimAdmin,
{
    let fx = fixture(f, two_deliveries(false)).await;
    let answered = fx.req("answered", "t", 3600);
    to_the_limit(&fx, &answered).await;
    let garbage = Member::from(b"not json".to_vec());
    let s = Submission {
        member: garbage.clone(),
        generation: Generation::new("garbage", "t"),
        deadline: answered.deadline,
        payload: None,
    };
    fx.store.submit(Q, &s).await.unwrap();
    assert!(
        fx.store
            .dead_letter(Q, &garbage, "unparsable")
            .await
            .unwrap()
    );
    let missing = fx.req("missing", "t", 3600).member;
    let asked = [answered.member.clone(), garbage, missing];
    let out = fx.store.redrive_dead(Q, &asked).await.unwrap();
    assert_eq!(
        out,
        vec![Redrive::Answered, Redrive::Unparsable, Redrive::NotDead]
    );
    assert_eq!(fx.depths().await.dead, 2);
    assert!(fx.pending().await.is_empty());
    assert_eq!(fx.result_ids().await, vec!["answered"], "one record only");
}

pub async fn a_member_repeated_in_one_redrive_moves_once<F: StoreFactory>(f: &F)
where
    F::Store: ClaimAdmin,
{
    let fx = fixture(f, config()).await;
    let r = fx.req("a", "t", 3600);
    fx.submit(r.one()).await;
    assert!(fx.store.dead_letter(Q, &r.member, "why").await.unwrap());
    let twice = [r.member.clone(), r.member.clone()];
    let out = fx.store.redrive_dead(Q, &twice).await.unwrap();
    assert_eq!(out, vec![Redrive::Moved, Redrive::NotDead]);
    assert_eq!(fx.pending().await, vec![r.member]);
}

pub async fn purge_deletes_dead_entries_and_says_which<F: StoreFactory>(f: &F)
where
    F::Store: ClaimAdmin,
{
    let fx = fixture(f, config()).await;
    let (a, b) = (fx.req("a", "t", 3600), fx.req("b", "t", 3601));
    fx.submit(&[a.clone(), b.clone()]).await;
    for r in [&a, &b] {
        assert!(fx.store.dead_letter(Q, &r.member, "why").await.unwrap());
    }
    let missing = fx.req("missing", "t", 3600).member;
    let asked = [a.member.clone(), missing, a.member.clone()];
    let out = fx.store.purge_dead(Q, &asked).await.unwrap();
    assert_eq!(out, vec![true, false, false]);
    let dead = fx.store.dead_entries(Q).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].member, b.member);
    assert!(fx.pending().await.is_empty(), "a purge redrives nothing");
}

pub async fn release_claim_ends_any_owners_claim_at_once_without_counting_a_delivery<
    F: StoreFactory,
>(
    f: &F,
) where
    F::Store: ClaimAdmin,
{
    let fx = fixture(f, config()).await;
    let r = fx.req("a", "t", 3600);
    fx.lapse("w1", &r).await;
    fx.claim("w2", r.one()).await;
    let g = r.generation.clone();
    let released = fx.store.release_claim(Q, &g).await.unwrap();
    assert_eq!(released, Some(owner("w2")));
    let pending = fx.store.peek(Q, 0, 10).await.unwrap();
    assert_eq!(
        (pending.len(), pending[0].score),
        (1, Score(r.deadline as f64))
    );
    assert_eq!(fx.depths().await.claimed, 0);
    assert_eq!(fx.renew("w2", r.one()).await, vec![RenewOutcome::Lost]);
    assert_eq!(
        fx.store.release_claim(Q, &g).await.unwrap(),
        None,
        "nothing held any more"
    );
    assert_eq!(
        serve(&fx, "w3", &r).await,
        Some(1),
        "the count of the earlier lapse is kept, none added"
    );
    assert_eq!(fx.result_ids().await, vec!["a"]);
}

pub async fn a_release_racing_the_stale_owners_ack_still_yields_exactly_one_record<
    F: StoreFactory,
>(
    f: &F,
) where
    F::Store: ClaimAdmin,
{
    let (fx, r) = one_claimed(f, "stalled", 3600).await;
    let g = r.generation.clone();
    let (released, acked) = futures::join!(
        fx.store.release_claim(Q, &g),
        fx.ack("stalled", r.one(), "late")
    );
    released.unwrap();
    assert!(acked[0].pushed, "{acked:?}");
    // Whatever order they ran in, another replica then finds nothing to
    // answer twice: a pending copy is suppressed by the marker.
    if let Some(n) = serve(&fx, "w2", &r).await {
        assert_eq!(n, 0);
    }
    assert_eq!(fx.result_ids().await, vec!["a"]);
    let d = fx.depths().await;
    assert_eq!((d.pending, d.claimed, d.dead), (0, 0, 0));
}

pub async fn a_redrive_racing_a_reclaim_loses_nothing_and_yields_one_record<F: StoreFactory>(f: &F)
where
    F::Store: ClaimAdmin,
{
    let fx = fixture(f, two_deliveries(true)).await;
    block(&fx).await;
    let (dead, lapsing) = (fx.req("dead", "t", 3600), fx.req("lapsing", "t", 3601));
    let both_reqs = [dead.clone(), lapsing.clone()];
    fx.submit(&both_reqs).await;
    fx.claim("w1", &both_reqs).await;
    assert_eq!(fx.reclaim_at(31).await.redelivered, 2);
    fx.claim("w2", dead.one()).await;
    assert_eq!(fx.reclaim_at(62).await.dead_lettered, 1);
    // `lapsing` reaches its limit in the reclaim racing the redrive.
    fx.claim("w2", lapsing.one()).await;
    fx.clock.set(fx.at(93));
    let both = [dead.member.clone(), lapsing.member.clone()];
    let (redriven, _) = futures::join!(fx.store.redrive_dead(Q, &both), fx.reclaim_all());
    assert_eq!(redriven.unwrap()[0], Redrive::Moved);
    // The operator fixes the list and redrives what the race left dead.
    unblock(&fx).await;
    fx.store.redrive_dead(Q, &both).await.unwrap();
    for r in [&dead, &lapsing] {
        assert!(
            serve(&fx, "w3", r).await.is_some(),
            "{} is pending",
            r.generation
        );
    }
    assert_eq!(fx.result_ids().await, vec!["dead", "lapsing"]);
    let d = fx.depths().await;
    assert_eq!((d.pending, d.claimed, d.dead), (0, 0, 0));
}

pub async fn pause_and_resume_are_read_back_per_queue_and_say_whether_they_changed<
    F: StoreFactory,
>(
    f: &F,
) where
    F::Store: ClaimAdmin,
{
    let fx = fixture(f, config()).await;
    assert!(!fx.store.paused(Q).await.unwrap());
    assert!(fx.store.set_paused(Q, true).await.unwrap());
    assert!(
        !fx.store.set_paused(Q, true).await.unwrap(),
        "already paused"
    );
    assert!(fx.store.paused(Q).await.unwrap());
    assert!(!fx.store.paused("another-queue").await.unwrap());
    assert!(fx.store.set_paused(Q, false).await.unwrap());
    assert!(
        !fx.store.set_paused(Q, false).await.unwrap(),
        "already running"
    );
    assert!(!fx.store.paused(Q).await.unwrap());
}

pub async fn a_pause_racing_a_claim_loses_nothing_and_held_claims_finish<F: StoreFactory>(f: &F)
where
    F::Store: ClaimAdmin,
{
    let fx = fixture(f, config()).await;
    let rs = fx.reqs(10);
    fx.submit(&rs).await;
    // The store keeps the flag; replicas stop claiming when they read it.
    // A claim racing the pause either landed or left the member pending.
    let (claimed, paused) = futures::join!(fx.claim("w1", &rs), fx.store.set_paused(Q, true));
    assert!(paused.unwrap());
    let held: Vec<Req> = rs
        .iter()
        .zip(&claimed)
        .filter(|(_, o)| matches!(o, ClaimOutcome::Claimed { .. }))
        .map(|(r, _)| r.clone())
        .collect();
    assert_eq!(held.len() + fx.depths().await.pending, 10, "nothing lost");
    if !held.is_empty() {
        fx.ack("w1", &held, "done").await;
    }
    assert_eq!(fx.result_ids().await.len(), held.len());
    assert!(fx.store.paused(Q).await.unwrap());
    fx.store.set_paused(Q, false).await.unwrap();
    let rest: Vec<Req> = rs
        .iter()
        .filter(|r| !held.contains_gen(r))
        .cloned()
        .collect();
    for r in &rest {
        assert!(serve(&fx, "w2", r).await.is_some());
    }
    assert_eq!(fx.result_ids().await.len(), 10, "one record each");
}

pub async fn list_len_counts_a_result_lists_records<F: StoreFactory>(f: &F)
where
    F::Store: ClaimAdmin,
{
    let fx = fixture(f, config()).await;
    assert_eq!(fx.store.list_len(super::support::RESULTS).await.unwrap(), 0);
    for r in fx.reqs(3) {
        fx.answer("w1", &r, "ok").await;
    }
    assert_eq!(fx.store.list_len(super::support::RESULTS).await.unwrap(), 3);
}

/// Whether a batch of requests holds one of `r`'s generation.
trait ContainsGen {
    fn contains_gen(&self, r: &Req) -> bool;
}

impl ContainsGen for Vec<Req> {
    fn contains_gen(&self, r: &Req) -> bool {
        self.iter().any(|h| h.generation == r.generation)
    }
}

/// One member, as the batch the admin calls take.
trait One {
    fn one(&self) -> &[Member];
}

impl One for Member {
    fn one(&self) -> &[Member] {
        std::slice::from_ref(self)
    }
}
super::admin_checks! {
    admin:
        redrive_moves_dead_entries_back_at_their_original_score_with_the_delivery_count_reset,
        redrive_leaves_answered_unparsable_and_missing_entries_where_they_are,
        a_member_repeated_in_one_redrive_moves_once,
        purge_deletes_dead_entries_and_says_which,
        release_claim_ends_any_owners_claim_at_once_without_counting_a_delivery,
        a_release_racing_the_stale_owners_ack_still_yields_exactly_one_record,
        a_redrive_racing_a_reclaim_loses_nothing_and_yields_one_record,
        pause_and_resume_are_read_back_per_queue_and_say_whether_they_changed,
        a_pause_racing_a_claim_loses_nothing_and_held_claims_finish,
        list_len_counts_a_result_lists_records;
}
