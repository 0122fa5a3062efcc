//! Checks of poison isolation and of exactly one record after a backlog: an item that cannot be applied is answered alone.
//!
//! A wrong-type key is made through the trait only (a result list named
//! like a queue that has pending members, or like `<queue>:claimed` while a
//! claim is held), so the memory model and Redis run the same checks.

use super::StoreFactory;
use super::acks::pushed_dropped;
use super::support::{
    Fixture, Q, RESULTS, Req, config, fixture, limited_with_list, one_answered, one_claimed, owner,
};
use crate::CheckedStore;
use claim_core::ClaimProducer;
use claim_core::store::{AckOutcome, ClaimOutcome};
use claim_core::wire;
use claim_core::{ClaimInspect, ClaimStore};

/// `who`'s ack of `r` to the queue's own pending set: an unusable list.
async fn ack_to_the_queue<S: CheckedStore>(
    fx: &Fixture<S>,
    who: &str,
    r: &Req,
    text: &str,
) -> Vec<AckOutcome> {
    fx.store
        .ack(owner(who).on(Q), &[r.ack_item(Q, text)])
        .await
        .unwrap()
}

/// w1's stale ack of `r` to an unusable list, which must do nothing.
async fn assert_stale_ack_does_nothing<S: CheckedStore>(fx: &Fixture<S>, r: &Req) {
    let stale = ack_to_the_queue(fx, "w1", r, "stale").await;
    assert_eq!(stale, vec![Default::default()], "nothing done");
}

/// The queue's (pending, claimed, dead) depths are `want`.
async fn assert_depths<S: CheckedStore>(fx: &Fixture<S>, want: (usize, usize, usize), why: &str) {
    let d = fx.depths().await;
    assert_eq!((d.pending, d.claimed, d.dead), want, "{why}");
}

/// w2, holding `r`, acks it to an unusable list: `r` alone is dead-lettered.
async fn assert_holders_ack_dead_letters<S: CheckedStore>(fx: &Fixture<S>, r: &Req) {
    let holder = ack_to_the_queue(fx, "w2", r, "holder").await;
    assert!(holder[0].dead_lettered && holder[0].claim_dropped);
    let d = fx.depths().await;
    assert_eq!((d.pending, d.claimed, d.dead), (0, 0, 1));
}

/// `r`'s claim lapses from w1 and w2 claims it and parks a retry copy due at 40 s.
async fn lapse_then_park<S: CheckedStore>(fx: &Fixture<S>, r: &Req) {
    fx.lapse("w1", r).await;
    fx.claim("w2", r.one()).await;
    let stamped = wire::stamp_retry(r.member.as_bytes(), Q).expect("stamp");
    assert_eq!(fx.park_as("w2", r, stamped, 40).await, vec![true]);
}

pub async fn ack_to_an_unusable_result_list_dead_letters_the_member_alone_and_pushes_nothing(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let rs: Vec<Req> = ["own", "zset", "claims", "fine"]
        .iter()
        .enumerate()
        .map(|(i, id)| fx.req(id, "t", 3600 + i as i64))
        .collect();
    let other = fx.req("elsewhere", "t", 7200);
    fx.store
        .submit("other-queue", &other.submission())
        .await
        .unwrap();
    // Keeps Q's pending set non-empty while the batch is acked.
    let waiting = fx.req("waiting", "t", 9000);
    fx.submit(&rs).await;
    fx.submit(waiting.one()).await;
    fx.claim("w1", &rs).await;
    let claimed = format!("{Q}:claimed");
    let items = [
        rs[0].ack_item(Q, "a"),
        rs[1].ack_item("other-queue", "b"),
        rs[2].ack_item(&claimed, "c"),
        rs[3].ack_item(RESULTS, "d"),
    ];
    let out = fx.store.ack(owner("w1").on(Q), &items).await.unwrap();
    let shape: Vec<(bool, bool, bool)> = out
        .iter()
        .map(|o| (o.pushed, o.claim_dropped, o.dead_lettered))
        .collect();
    assert_eq!(
        shape,
        vec![
            (false, true, true),
            (false, true, true),
            (false, true, true),
            (true, true, false)
        ],
        "each unusable list is answered alone; the usable one lands"
    );
    assert_eq!(fx.result_ids().await, vec!["fine"]);
    let dead = fx.store.dead_entries(Q).await.unwrap();
    let reason = |r: &Req| {
        dead.iter()
            .find(|d| d.member == r.member)
            .map(|d| d.reason.clone())
            .unwrap_or_else(|| panic!("{} not dead-lettered: {dead:?}", r.generation))
    };
    assert!(reason(&rs[0]).contains("pending set of queue"), "{dead:?}");
    assert_eq!(
        reason(&rs[1]),
        "result list \"other-queue\" holds a zset",
        "{dead:?}"
    );
    assert!(reason(&rs[2]).contains("claimed key"), "{dead:?}");
    for r in &rs[..3] {
        assert!(
            !fx.store.is_terminal(&r.generation).await.unwrap(),
            "no marker, so a redrive after the fix gets its record"
        );
    }
    let d = fx.depths().await;
    assert_eq!((d.pending, d.claimed, d.dead), (1, 0, 3));
    assert_eq!(fx.store.peek("other-queue", 0, 10).await.unwrap().len(), 1);
}

pub async fn an_unusable_result_list_of_an_answered_generation_suppresses_without_dead_lettering(
    f: &impl StoreFactory,
) {
    let (fx, r) = one_answered(f, "first").await;
    let out = ack_to_the_queue(&fx, "w1", &r, "again").await;
    assert!(!out[0].pushed && !out[0].dead_lettered, "{out:?}");
    assert_eq!(fx.depths().await.dead, 0, "answered once is not poison");
}

pub async fn reclaim_at_the_limit_with_an_unusable_result_list_dead_letters_with_why_and_moves_the_rest(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, limited_with_list(2, "other-queue")).await;
    let blocker = fx.req("blocker", "t", 7200);
    fx.store
        .submit("other-queue", &blocker.submission())
        .await
        .unwrap();
    let (poison, next) = (fx.req("poison", "t", 3600), fx.req("next", "t", 3601));
    fx.submit_and_claim("w1", &poison).await;
    assert_eq!(fx.reclaim_at(31).await.redelivered, 1);
    fx.submit(next.one()).await;
    fx.claim("w2", &[poison.clone(), next.clone()]).await;
    let report = fx.reclaim_at(62).await;
    assert_eq!(
        (report.dead_lettered, report.redelivered, report.more),
        (1, 1, false),
        "{report:?}"
    );
    let dead = fx.store.dead_entries(Q).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].member, poison.member);
    assert!(
        dead[0]
            .reason
            .contains("DELIVERY_LIMIT record could not be pushed")
            && dead[0]
                .reason
                .contains("result list \"other-queue\" holds a zset"),
        "{}",
        dead[0].reason
    );
    assert!(!fx.store.is_terminal(&poison.generation).await.unwrap());
    assert_eq!(fx.pending().await, vec![next.member.clone()]);
    assert_eq!(fx.store.claims(Q).await.unwrap().len(), 0);
}

pub async fn a_stale_owners_ack_after_a_reclaim_removes_the_pending_copy_so_no_second_record_follows(
    f: &impl StoreFactory,
) {
    let (fx, r) = one_claimed(f, "w1", 86_400).await;
    assert_eq!(fx.reclaim_at(31).await.redelivered, 1);
    let out = fx.ack("w1", r.one(), "late").await;
    assert!(out[0].pushed && !out[0].claim_dropped, "{out:?}");
    assert_eq!(fx.depths().await.pending, 0, "the pending copy went too");
    // Long after the dedup TTL (one hour here), a backlog reaches the copy.
    fx.clock.set(fx.at(7200));
    let again = fx.claim("w2", r.one()).await;
    assert_eq!(again, vec![ClaimOutcome::NotPending]);
    assert_eq!(fx.result_ids().await, vec!["a"]);
}

pub async fn an_owners_marker_lives_the_dedup_ttl_whatever_the_deadline(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let far = fx.req("far", "t", 30_000);
    let past = fx.req("past", "t", -100);
    fx.submit(&[far.clone(), past.clone()]).await;
    fx.claim("w1", &[far.clone(), past.clone()]).await;
    fx.ack("w1", &[far.clone(), past.clone()], "x").await;
    // The owner's ack dropped the only claim: nothing else can answer
    // either generation, and the marker only guards the dedup TTL (1 h).
    fx.clock.set(fx.at(3599));
    for r in [&far, &past] {
        assert!(
            fx.store.is_terminal(&r.generation).await.unwrap(),
            "{}",
            r.generation.id
        );
    }
    // Within it, a resubmission of the same bytes is a duplicate.
    fx.submit(far.one()).await;
    assert_eq!(
        fx.claim("w2", far.one()).await,
        vec![ClaimOutcome::DuplicateDropped]
    );
    fx.clock.set(fx.at(3601));
    for r in [&far, &past] {
        assert!(
            !fx.store.is_terminal(&r.generation).await.unwrap(),
            "{}: gone the dedup TTL after the ack, not after its deadline",
            r.generation.id
        );
    }
    // A stale copy of the owner's claim finds the generation nowhere.
    let late = fx.ack("w1", far.one(), "late").await;
    assert!(!late[0].pushed, "{late:?}");
    assert_eq!(fx.result_ids().await.len(), 2, "one record each");
}

pub async fn a_stale_owners_ack_of_a_parked_generation_is_suppressed_and_the_parked_copy_answers(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let r = fx.req("a", "t", 3600);
    lapse_then_park(&fx, &r).await;
    // Parked under new bytes: not ours to answer from the stale owner's
    // copy (it may as well be a Go processor's by now); the parked copy is.
    let out = fx.ack("w1", r.one(), "stale").await;
    assert_eq!(out, vec![pushed_dropped(false, false)]);
    assert!(!fx.store.is_terminal(&r.generation).await.unwrap());
    fx.clock.set(fx.at(41));
    assert_eq!(fx.store.promote_due(10).await.unwrap(), 1);
    let back = fx.store.peek(Q, 0, 10).await.unwrap();
    assert_eq!(back.len(), 1, "the parked copy is served again");
    let again = Req {
        member: back[0].member.clone(),
        ..r.clone()
    };
    fx.claim("w3", again.one()).await;
    let out = fx.ack("w3", again.one(), "parked copy").await;
    assert_eq!(out, vec![pushed_dropped(true, true)]);
    fx.assert_answered_once("a").await;
}

pub async fn promote_never_moves_a_retry_entry_into_a_bookkeeping_key(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let deadline = crate::T0.0 / 1000 + 900;
    let target = format!("{Q}:claims-idx");
    let member = format!(
        r#"{{"internal":{{"retry_count":1,"request_queue_name":"{target}","request_token":"g"}},"request_kind":"redis","data":{{"id":"bk","deadline":{deadline},"payload":{{}}}}}}"#
    );
    let carrier = fx.req("carrier", "t", 3600);
    fx.submit_and_claim("w1", &carrier).await;
    fx.park_as("w1", &carrier, member.clone().into_bytes(), 1)
        .await;
    fx.clock.set(fx.at(2));
    assert_eq!(fx.store.promote_due(10).await.unwrap(), 1);
    assert_eq!(fx.store.retry_depth().await.unwrap(), 0);
    let default_queue = fx.store.config().default_queue.clone();
    let dead = fx.store.dead_entries(&default_queue).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0].member.as_bytes(), member.as_bytes());
    assert!(
        dead[0].reason.contains("claims-idx key"),
        "{}",
        dead[0].reason
    );
    assert!(fx.store.peek(&target, 0, 10).await.unwrap().is_empty());
}

pub async fn a_stale_owner_leaves_an_unusable_list_to_the_claim_holder(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let r = fx.req("a", "t", 3600);
    fx.lapse("w1", &r).await;
    fx.claim("w2", r.one()).await;
    assert_stale_ack_does_nothing(&fx, &r).await;
    let d = fx.depths().await;
    assert_eq!((d.claimed, d.dead), (1, 0), "never both claimed and dead");
    assert_holders_ack_dead_letters(&fx, &r).await;
}

pub async fn a_stale_owners_ack_to_an_unusable_list_leaves_a_parked_generation_in_the_retry_set_alone(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let r = fx.req("a", "t", 3600);
    lapse_then_park(&fx, &r).await;
    assert_stale_ack_does_nothing(&fx, &r).await;
    assert_depths(&fx, (0, 0, 0), "never both parked and dead").await;
    assert_eq!(fx.store.retry_depth().await.unwrap(), 1);
}

pub async fn a_stale_owners_ack_to_an_unusable_list_leaves_the_pending_copy_for_its_next_holder(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let r = fx.req("a", "t", 3600);
    fx.lapse("w1", &r).await;
    assert_stale_ack_does_nothing(&fx, &r).await;
    assert_depths(&fx, (1, 0, 0), "never both pending and dead").await;
    fx.claim("w2", r.one()).await;
    assert_holders_ack_dead_letters(&fx, &r).await;
}

super::checks! {
    clock_free:
        ack_to_an_unusable_result_list_dead_letters_the_member_alone_and_pushes_nothing,
        an_unusable_result_list_of_an_answered_generation_suppresses_without_dead_lettering;
    clocked:
        an_owners_marker_lives_the_dedup_ttl_whatever_the_deadline,
        a_stale_owner_leaves_an_unusable_list_to_the_claim_holder,
        a_stale_owners_ack_to_an_unusable_list_leaves_a_parked_generation_in_the_retry_set_alone,
        a_stale_owners_ack_to_an_unusable_list_leaves_the_pending_copy_for_its_next_holder,
        reclaim_at_the_limit_with_an_unusable_result_list_dead_letters_with_why_and_moves_the_rest,
        a_stale_owners_ack_after_a_reclaim_removes_the_pending_copy_so_no_second_record_follows,
        a_stale_owners_ack_of_a_parked_generation_is_suppressed_and_the_parked_copy_answers,
        promote_never_moves_a_retry_entry_into_a_bookkeeping_key;
}
