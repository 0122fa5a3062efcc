//! Checks that a lease and a terminal marker follow the member's deadline, never its pending score (issue 17, item 3).
//!
//! Whoever writes to a queue chooses the score: 0, a very negative number,
//! or the creation time instead of the deadline. The score orders the queue
//! (earliest first); it must not shorten a lease (a holder that renews would
//! be reclaimed on every tick and reach the delivery limit with no worker
//! dying) nor a terminal marker.

use super::StoreFactory;
use super::support::{Q, RESULTS, Req, config, fixture, owner};
use claim_core::ClaimProducer;
use claim_core::store::{AckItem, ClaimOutcome, RenewOutcome, Submission};
use claim_core::types::{Millis, Score};
use claim_core::{ClaimInspect, ClaimStore};

/// `r`'s submission with the pending score `score_secs` instead of its
/// deadline (the member's `data.deadline` is unchanged).
fn scored(r: &Req, score_secs: i64) -> Submission {
    Submission {
        deadline: score_secs,
        ..r.submission()
    }
}

/// An hour away, as Unix seconds of the suite's start: a creation-time score.
fn created(r: &Req) -> i64 {
    r.deadline - 3600
}

pub async fn a_member_scored_far_below_its_deadline_is_not_reclaimed_while_its_holder_renews(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let zero = fx.req("zero", "t", 3600);
    let low = fx.req("low", "t", 3600);
    let by_creation = fx.req("by-creation", "t", 7200);
    for (r, score) in [
        (&zero, 0),
        (&low, i64::MIN / 2),
        (&by_creation, created(&by_creation)),
    ] {
        fx.store.submit(Q, &scored(r, score)).await.expect("submit");
    }
    let all = [zero.clone(), low.clone(), by_creation.clone()];
    let claimed = fx.claim("w1", &all).await;
    for outcome in &claimed {
        let ClaimOutcome::Claimed { lease_expiry, .. } = outcome else {
            panic!("every member is claimed, got {outcome:?}");
        };
        assert_eq!(*lease_expiry, fx.at(30), "now + TTL: the deadlines are far");
    }
    assert_eq!(
        fx.reclaim_all().await.redelivered,
        0,
        "a fresh lease is live, whatever the score"
    );
    for step in 1..=4 {
        fx.clock.set(fx.at(20 * step));
        let renewed = fx.renew("w1", &all).await;
        let want = RenewOutcome::Renewed {
            lease_expiry: fx.at(20 * step + 30),
        };
        assert_eq!(renewed, vec![want; 3], "renewal {step} keeps every lease");
        let report = fx.reclaim_all().await;
        assert_eq!(report.redelivered + report.dead_lettered, 0, "step {step}");
    }
    let claims = fx.store.claims(Q).await.unwrap();
    assert_eq!(claims.len(), 3);
    assert!(claims.iter().all(|c| c.lease_expiry == fx.at(110)));
    assert!(claims.iter().all(|c| c.redeliveries == 0));
    let acked = fx.ack("w1", &all, "done").await;
    assert!(acked.iter().all(|a| a.pushed && a.claim_dropped));
    assert_eq!(fx.result_ids().await.len(), 3, "one record each");
}

pub async fn a_member_scored_below_its_deadline_keeps_its_place_and_its_deadline_caps_the_lease(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let soon = fx.req("soon", "t", 60);
    let zero = fx.req("zero", "t", 3600);
    let overdue = fx.req("overdue", "t", -10);
    fx.submit(soon.one()).await;
    fx.store.submit(Q, &scored(&zero, 0)).await.expect("submit");
    let overdue_score = overdue.deadline + 100_000;
    fx.store
        .submit(Q, &scored(&overdue, overdue_score))
        .await
        .expect("submit");
    let order = fx.store.peek(Q, 0, 10).await.unwrap();
    let members: Vec<_> = order.iter().map(|e| e.member.clone()).collect();
    assert_eq!(
        members,
        vec![
            zero.member.clone(),
            soon.member.clone(),
            overdue.member.clone()
        ],
        "the score orders the queue (earliest first)"
    );
    assert_eq!(order[0].score, Score(0.0));
    let claimed = fx.claim("w1", &[zero.clone(), overdue.clone()]).await;
    let leases: Vec<Millis> = claimed
        .iter()
        .map(|o| match o {
            ClaimOutcome::Claimed { lease_expiry, .. } => *lease_expiry,
            other => panic!("claimed, got {other:?}"),
        })
        .collect();
    assert_eq!(
        leases,
        vec![fx.at(30), fx.at(20)],
        "the deadline caps the lease (deadline + 30 s), not the score"
    );
    fx.clock.set(fx.at(15));
    assert_eq!(
        fx.renew("w1", overdue.one()).await,
        vec![RenewOutcome::Renewed {
            lease_expiry: fx.at(20)
        }],
        "a renewal keeps the deadline's cap, however high the score"
    );
    assert_eq!(
        fx.release("w1", zero.one()).await,
        vec![true],
        "released back to pending"
    );
    let order = fx.store.peek(Q, 0, 10).await.unwrap();
    assert_eq!(order[0].member, zero.member, "at its original score, first");
    assert_eq!(order[0].score, Score(0.0));
}

pub async fn a_stale_owners_marker_beside_another_claim_follows_the_deadline_of_a_member_scored_below_it(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let days = 3 * 86_400;
    let zero = fx.req("zero", "t", days);
    fx.store.submit(Q, &scored(&zero, 0)).await.expect("submit");
    fx.claim("w1", zero.one()).await;
    assert_eq!(fx.reclaim_at(31).await.redelivered, 1, "w1's lease lapsed");
    let claimed = fx.claim("w2", zero.one()).await;
    let ClaimOutcome::Claimed { score, .. } = claimed[0] else {
        panic!("claimed, got {claimed:?}");
    };
    assert_eq!(score, Score(0.0));
    // The stale owner w1 answers first (the runtime acks with the score
    // its claim answered) while w2 still holds the claim.
    let item = AckItem {
        score,
        ..zero.ack_item(RESULTS, "stale")
    };
    let acked = fx.store.ack(owner("w1").on(Q), &[item]).await.unwrap();
    assert!(acked[0].pushed && !acked[0].claim_dropped);
    // w2's claim can last until deadline + 30 s: the marker lives the
    // dedup TTL (1 h) past that; from the score it would have lived 1 h
    // from now, from the ack alone too.
    for secs in [3_632, days as u64, days as u64 + 30 + 3_599] {
        fx.clock.set(fx.at(secs));
        assert!(
            fx.store.is_terminal(&zero.generation).await.unwrap(),
            "answered at {secs} s"
        );
    }
    // The holder's own record, however late, is a duplicate.
    fx.clock.set(fx.at(days as u64));
    let late = fx.ack("w2", zero.one(), "holder").await;
    assert!(!late[0].pushed && late[0].claim_dropped, "{late:?}");
    assert_eq!(fx.result_ids().await, vec!["zero"], "one record");
}

pub async fn a_member_whose_deadline_cannot_be_read_is_leased_for_the_ttl_whatever_its_score(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    // Each member's data.deadline is unusable (the runtime answers it
    // INVALID_REQUEST right after the claim): beyond 9999-12-31, a string,
    // missing. Its lease is now + TTL, renewable like any other.
    let bodies = [
        ("huge", r#""deadline":9223372036854775807"#),
        ("text", r#""deadline":"soon""#),
        ("none", r#""created":1"#),
    ];
    let reqs: Vec<Req> = bodies
        .iter()
        .map(|(id, field)| {
            let json = format!(
                r#"{{"internal":{{"request_token":"t"}},"request_kind":"redis","data":{{"id":"{id}",{field},"payload":{{}}}}}}"#
            );
            Req {
                member: claim_core::types::Member::from(json.into_bytes()),
                generation: claim_core::types::Generation::new(*id, "t"),
                deadline: 0,
            }
        })
        .collect();
    for r in &reqs {
        fx.store.submit(Q, &scored(r, 0)).await.expect("submit");
    }
    let claimed = fx.claim("w1", &reqs).await;
    for outcome in &claimed {
        let ClaimOutcome::Claimed { lease_expiry, .. } = outcome else {
            panic!("claimed, got {outcome:?}");
        };
        assert_eq!(*lease_expiry, fx.at(30));
    }
    fx.clock.set(fx.at(20));
    let want = RenewOutcome::Renewed {
        lease_expiry: fx.at(50),
    };
    assert_eq!(fx.renew("w1", &reqs).await, vec![want; 3]);
    assert_eq!(fx.reclaim_at(40).await.redelivered, 0);
}

super::checks! {
    clocked:
        a_member_scored_far_below_its_deadline_is_not_reclaimed_while_its_holder_renews,
        a_member_scored_below_its_deadline_keeps_its_place_and_its_deadline_caps_the_lease,
        a_stale_owners_marker_beside_another_claim_follows_the_deadline_of_a_member_scored_below_it,
        a_member_whose_deadline_cannot_be_read_is_leased_for_the_ttl_whatever_its_score;
}
