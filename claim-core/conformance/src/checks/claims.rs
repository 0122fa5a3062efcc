//! Checks of peek, claim, cancellation, duplicates, leases and renewal.

use super::StoreFactory;
use super::support::{Q, T0, config, fixture, one_answered, one_claimed, owner};
use claim_core::ClaimProducer;
use claim_core::store::{ClaimOutcome, RenewOutcome};
use claim_core::types::{Millis, Score};
use claim_core::{ClaimInspect, ClaimStore};

fn claimed(outcome: &ClaimOutcome) -> bool {
    matches!(outcome, ClaimOutcome::Claimed { .. })
}

/// A claim's cancelled flag; `None` if `outcome` is not a claim.
fn cancelled_flag(outcome: &ClaimOutcome) -> Option<bool> {
    match outcome {
        ClaimOutcome::Claimed { cancelled, .. } => Some(*cancelled),
        _ => None,
    }
}

pub async fn peek_lists_members_earliest_deadline_first_without_removing_them(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let late = fx.req("late", "t", 7200);
    let early = fx.req("early", "t", 60);
    let mid = fx.req("mid", "t", 600);
    fx.submit(&[late.clone(), early.clone(), mid.clone()]).await;
    let first = fx.store.peek(Q, 0, 10).await.unwrap();
    let order: Vec<_> = first.iter().map(|e| e.member.clone()).collect();
    assert_eq!(order, vec![early.member.clone(), mid.member, late.member]);
    assert_eq!(
        first[0].score,
        Score(early.deadline as f64),
        "score is the deadline"
    );
    assert_eq!(
        fx.store.peek(Q, 0, 10).await.unwrap(),
        first,
        "peek removes nothing"
    );
    assert_eq!(fx.depths().await.pending, 3);
}

pub async fn peek_honours_offset_and_limit(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let rs = fx.reqs(5);
    fx.submit(&rs).await;
    let page = fx.store.peek(Q, 1, 2).await.unwrap();
    let got: Vec<_> = page.into_iter().map(|e| e.member).collect();
    assert_eq!(got, vec![rs[1].member.clone(), rs[2].member.clone()]);
    assert!(fx.store.peek(Q, 5, 2).await.unwrap().is_empty());
    assert!(
        fx.store
            .peek("never-used-queue", 0, 2)
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn claim_moves_a_member_from_pending_into_a_claim_of_its_owner(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let r = fx.req("a", "t", 3600);
    fx.submit(r.one()).await;
    let out = fx.claim("w1", r.one()).await;
    assert_eq!(
        out,
        vec![ClaimOutcome::Claimed {
            cancelled: false,
            redeliveries: 0,
            score: Score(r.deadline as f64),
            lease_expiry: T0.plus(30_000),
        }]
    );
    assert!(fx.pending().await.is_empty(), "claimed member left pending");
    let claims = fx.store.claims(Q).await.unwrap();
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0].generation, r.generation);
    assert_eq!(claims[0].owner, owner("w1"));
    assert_eq!(claims[0].member, r.member);
    assert_eq!(claims[0].lease_expiry, T0.plus(30_000));
}

pub async fn claim_of_a_member_no_longer_pending_reports_not_pending(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let never = fx.req("never-submitted", "t", 3600);
    assert_eq!(
        fx.claim("w1", &[never]).await,
        vec![ClaimOutcome::NotPending]
    );
    assert_eq!(fx.depths().await.claimed, 0);
}

pub async fn of_two_owners_claiming_one_member_exactly_one_wins(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let r = fx.req("a", "t", 3600);
    fx.submit(r.one()).await;
    let first = fx.claim("w1", r.one()).await;
    let second = fx.claim("w2", r.one()).await;
    assert!(claimed(&first[0]));
    assert_eq!(second, vec![ClaimOutcome::NotPending]);
    assert_eq!(fx.store.claims(Q).await.unwrap()[0].owner, owner("w1"));
}

pub async fn concurrent_claims_never_dispatch_a_member_twice(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let rs = fx.reqs(40);
    fx.submit(&rs).await;
    let owners: Vec<String> = (0..8).map(|i| format!("w{i}")).collect();
    let attempts = owners.iter().map(|w| fx.claim(w, &rs));
    let outcomes = futures::future::join_all(attempts).await;
    for (i, r) in rs.iter().enumerate() {
        let winners = outcomes.iter().filter(|o| claimed(&o[i])).count();
        assert_eq!(winners, 1, "{} claimed by {winners} owners", r.generation);
    }
    assert_eq!(fx.depths().await.claimed, 40);
}

pub async fn a_pushed_job_is_peeked_and_claimed_with_its_payload(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let deadline = (fx.start.0 / 1000) as i64 + 3600;
    let payload = serde_json::json!({"model": "m", "prompt": "pushed"});
    let first = fx.store.push(Q, "job-1", payload.clone(), deadline).await;
    let first = first.expect("push");
    let second = fx
        .store
        .push(Q, "job-2", serde_json::json!({}), deadline)
        .await;
    let second = second.expect("push");
    assert_eq!((first.id.as_str(), second.id.as_str()), ("job-1", "job-2"));
    assert_ne!(first.token, second.token, "every push draws its own token");
    let pending = fx.store.peek(Q, 0, 10).await.unwrap();
    assert_eq!(pending.len(), 2, "{pending:?}");
    let head =
        claim_core::wire::parse_member(pending[0].member.as_bytes()).expect("a Go-shaped member");
    assert_eq!(
        (head.id.as_str(), head.token.as_str(), head.deadline),
        ("job-1", first.token.as_str(), deadline),
        "equal deadlines keep push order"
    );
    assert_eq!(head.request_queue_name.as_deref(), Some(Q));
    let request = claim_core::store::ClaimRequest {
        member: pending[0].member.clone(),
        generation: first.clone(),
    };
    let out = fx.store.claim(owner("w1").on(Q), &[request]).await.unwrap();
    assert!(claimed(&out[0]), "{out:?}");
    let claims = fx.store.claims(Q).await.unwrap();
    assert_eq!(claims[0].generation, first);
    let member: serde_json::Value = serde_json::from_slice(claims[0].member.as_bytes()).unwrap();
    assert_eq!(
        member["data"]["payload"], payload,
        "the payload travels in the member"
    );
}

pub async fn claim_reports_cancelled_when_the_cancel_marker_holds_this_token(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let r = fx.req("a", "t1", 3600);
    let other = fx.req("b", "t1", 3600);
    fx.submit(&[r.clone(), other.clone()]).await;
    assert!(fx.store.cancel("a").await.unwrap());
    assert!(
        !fx.store.cancel("no-such-id").await.unwrap(),
        "nothing active to cancel"
    );
    let out = fx.claim("w1", &[r, other]).await;
    assert_eq!(cancelled_flag(&out[0]), Some(true));
    assert_eq!(cancelled_flag(&out[1]), Some(false));
}

pub async fn cancelling_an_old_generation_does_not_cancel_a_resubmission(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let old = fx.req("a", "old", 3600);
    fx.submit(old.one()).await;
    assert!(fx.store.cancel("a").await.unwrap());
    let new = fx.req("a", "new", 3601);
    fx.submit(new.one()).await;
    let out = fx.claim("w1", &[old, new]).await;
    assert_eq!(
        cancelled_flag(&out[0]),
        Some(false),
        "resubmission cleared the cancel marker"
    );
    assert_eq!(cancelled_flag(&out[1]), Some(false));
}

pub async fn claim_drops_a_pending_duplicate_of_a_terminal_generation(f: &impl StoreFactory) {
    let (fx, r) = one_answered(f, "done").await;
    // The producer (or a stale replica) puts the same generation back.
    fx.submit(r.one()).await;
    assert_eq!(
        fx.claim("w2", r.one()).await,
        vec![ClaimOutcome::DuplicateDropped]
    );
    assert!(
        fx.pending().await.is_empty(),
        "duplicate removed, not left to be peeked forever"
    );
    assert_eq!(fx.depths().await.claimed, 0);
    assert_eq!(fx.result_ids().await, vec!["a"]);
}

pub async fn resubmitted_id_with_a_new_token_is_not_suppressed_by_the_old_marker(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let first = fx.req("a", "gen1", 3600);
    fx.answer("w1", &first, "one").await;
    let second = fx.req("a", "gen2", 3600);
    fx.submit(second.one()).await;
    assert!(claimed(&fx.claim("w1", second.one()).await[0]));
    let acked = fx.ack("w1", second.one(), "two").await;
    assert!(acked[0].pushed, "a new generation gets its own record");
    assert_eq!(fx.result_ids().await, vec!["a", "a"]);
}

pub async fn lease_expiry_is_now_plus_ttl_capped_at_deadline_plus_thirty_seconds(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let far = fx.req("far", "t", 3600);
    let near = fx.req("near", "t", -10);
    let past = fx.req("past", "t", -100);
    fx.submit(&[far.clone(), near.clone(), past.clone()]).await;
    fx.claim("w1", &[far, near, past]).await;
    let mut claims = fx.store.claims(Q).await.unwrap();
    claims.sort_by(|a, b| a.generation.id.cmp(&b.generation.id));
    let expiries: Vec<Millis> = claims.iter().map(|c| c.lease_expiry).collect();
    assert_eq!(expiries, vec![fx.at(30), fx.at(20), Millis(T0.0 - 70_000)]);
}

pub async fn renew_extends_the_lease_of_the_owner(f: &impl StoreFactory) {
    let (fx, r) = one_claimed(f, "w1", 3600).await;
    fx.clock.set(fx.at(20));
    assert_eq!(
        fx.renew("w1", r.one()).await,
        vec![RenewOutcome::Renewed {
            lease_expiry: fx.at(50)
        }]
    );
    fx.clock.set(fx.at(40));
    assert_eq!(
        fx.reclaim_all().await.redelivered,
        0,
        "renewed lease is still live at 40 s"
    );
    assert_eq!(fx.store.claims(Q).await.unwrap()[0].lease_expiry, fx.at(50));
}

pub async fn renew_by_another_owner_is_lost_and_changes_nothing(f: &impl StoreFactory) {
    let (fx, r) = one_claimed(f, "w1", 3600).await;
    fx.clock.set(fx.at(20));
    assert_eq!(
        fx.renew("intruder", r.one()).await,
        vec![RenewOutcome::Lost]
    );
    let claims = fx.store.claims(Q).await.unwrap();
    assert_eq!(
        claims[0].lease_expiry,
        fx.at(30),
        "a stale heartbeat never extends another's lease"
    );
    assert_eq!(claims[0].owner, owner("w1"));
}

pub async fn renew_after_the_claim_was_reclaimed_is_lost(f: &impl StoreFactory) {
    let (fx, r) = one_claimed(f, "w1", 3600).await;
    assert_eq!(fx.reclaim_at(31).await.redelivered, 1);
    assert!(claimed(&fx.claim("w2", r.one()).await[0]));
    assert_eq!(fx.renew("w1", r.one()).await, vec![RenewOutcome::Lost]);
    assert_eq!(fx.store.claims(Q).await.unwrap()[0].owner, owner("w2"));
}

pub async fn members_travel_byte_for_byte_through_claim_release_and_reclaim(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let raw = format!(
        "{{ \"data\" : {{\"deadline\":{},\"id\":\"odd\",\"payload\":{{\"p\":\"\\u00e9\"}},\"x-new\":[1, 2]}},\"internal\":{{\"request_token\":\"t\",\"future\":true}},\"request_kind\":\"redis\",\"extra\":null }}",
        T0.0 / 1000 + 3600
    );
    let mut r = fx.req("odd", "t", 3600);
    r.member = raw.into_bytes().into();
    fx.submit_and_claim("w1", &r).await;
    assert_eq!(fx.store.claims(Q).await.unwrap()[0].member, r.member);
    fx.release("w1", r.one()).await;
    assert_eq!(fx.pending().await, vec![r.member.clone()]);
    fx.claim("w1", r.one()).await;
    fx.reclaim_at(31).await;
    assert_eq!(
        fx.pending().await,
        vec![r.member.clone()],
        "reclaim restores the exact bytes"
    );
}

pub async fn depth_counts_claims_not_bookkeeping_entries(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let rs = fx.reqs(6);
    fx.submit(&rs).await;
    fx.claim("w1", &rs[..4]).await;
    fx.reclaim_at(31).await;
    fx.claim("w2", &rs[..2]).await;
    let d = fx.depths().await;
    assert_eq!((d.pending, d.claimed, d.dead), (4, 2, 0));
}

pub async fn a_cancel_after_the_claim_is_seen_by_the_holder(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let rs = [fx.req("a", "t1", 3600), fx.req("b", "t1", 3600)];
    fx.submit(&rs).await;
    fx.claim("w1", &rs).await;
    let gens: Vec<_> = rs.iter().map(|r| r.generation.clone()).collect();
    assert_eq!(fx.store.cancelled(&gens).await.unwrap(), vec![false, false]);
    assert!(fx.store.cancel("b").await.unwrap());
    assert_eq!(fx.store.cancelled(&gens).await.unwrap(), vec![false, true]);
    let other_generation = [claim_core::Generation::new("b", "t0")];
    assert_eq!(
        fx.store.cancelled(&other_generation).await.unwrap(),
        vec![false]
    );
}

pub async fn peek_after_pages_pending_by_score_without_the_pages_before(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let rs = fx.reqs(5);
    fx.submit(&rs).await;
    let page = |after: Score| fx.store.peek_after(Q, after, 2);
    let first = page(Score(0.0)).await.unwrap();
    assert_eq!(first, fx.store.peek(Q, 0, 2).await.unwrap());
    let second = page(first[1].score).await.unwrap();
    assert_eq!(second, fx.store.peek(Q, 2, 2).await.unwrap());
    let last = page(second[1].score).await.unwrap();
    assert_eq!((last.len(), &last[0].member), (1, &rs[4].member));
    assert!(page(last[0].score).await.unwrap().is_empty());
    assert!(
        fx.store
            .peek_after("no-such-queue", Score(0.0), 2)
            .await
            .unwrap()
            .is_empty()
    );
}

super::checks! {
    clock_free:
        peek_lists_members_earliest_deadline_first_without_removing_them,
        a_pushed_job_is_peeked_and_claimed_with_its_payload,
        peek_honours_offset_and_limit,
        peek_after_pages_pending_by_score_without_the_pages_before,
        claim_of_a_member_no_longer_pending_reports_not_pending,
        of_two_owners_claiming_one_member_exactly_one_wins,
        concurrent_claims_never_dispatch_a_member_twice,
        claim_reports_cancelled_when_the_cancel_marker_holds_this_token,
        cancelling_an_old_generation_does_not_cancel_a_resubmission,
        claim_drops_a_pending_duplicate_of_a_terminal_generation,
        resubmitted_id_with_a_new_token_is_not_suppressed_by_the_old_marker,
        a_cancel_after_the_claim_is_seen_by_the_holder;
    clocked:
        claim_moves_a_member_from_pending_into_a_claim_of_its_owner,
        lease_expiry_is_now_plus_ttl_capped_at_deadline_plus_thirty_seconds,
        renew_extends_the_lease_of_the_owner,
        renew_by_another_owner_is_lost_and_changes_nothing,
        renew_after_the_claim_was_reclaimed_is_lost,
        members_travel_byte_for_byte_through_claim_release_and_reclaim,
        depth_counts_claims_not_bookkeeping_entries;
}
