//! Checks of `ClaimAdmin::retry_now`: one parked retry promoted now, whatever its due time, by the promoter's rules (answered generations dropped, entries that cannot be promoted dead-lettered, nothing else touched).
//!
//! Each runs once per store (`admin::retry_now::<check>`), as the other
//! operator checks do. The traits have no raw write to the retry set, so
//! a carrier claim parks each entry ([`super::support::Fixture::park_as`]).

use super::StoreFactory;
use super::support::{Q, config, fixture, one_answered};
use claim_core::admin::{ClaimAdmin, RetryNow};
use claim_core::types::{Member, Score};
use claim_core::{ClaimInspect, ClaimStore, wire};

pub async fn retry_now_promotes_a_parked_retry_before_it_is_due_at_its_pending_score_once<
    F: StoreFactory,
>(
    f: &F,
) where
    F::Store: ClaimAdmin,
{
    let fx = fixture(f, config()).await;
    let (r, other) = (fx.req("a", "t", 3600), fx.req("b", "t", 3600));
    for req in [&r, &other] {
        fx.submit_and_claim("w1", req).await;
        let stamped = wire::stamp_retry(req.member.as_bytes(), Q).expect("stamp");
        assert_eq!(fx.park_as("w1", req, stamped, 600).await, vec![true]);
    }
    let parked = fx.store.retry_entries().await.unwrap();
    let mine = parked
        .iter()
        .find(|e| wire::parse_member(e.member.as_bytes()).unwrap().id == "a")
        .expect("a is parked")
        .member
        .clone();
    let out = fx.store.retry_now(&mine).await.unwrap();
    assert_eq!(out, RetryNow::Promoted, "ten minutes before it is due");
    let pending = fx.store.peek(Q, 0, 10).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].member.clone(), pending[0].score),
        (mine.clone(), Score(r.deadline as f64))
    );
    assert_eq!(fx.store.retry_depth().await.unwrap(), 1, "b stays parked");
    assert_eq!(
        fx.store.retry_now(&mine).await.unwrap(),
        RetryNow::NotParked,
        "a second call finds nothing parked"
    );
    assert_eq!(fx.store.peek(Q, 0, 10).await.unwrap().len(), 1);
    fx.clock.set(fx.at(600));
    assert_eq!(fx.store.promote_due(10).await.unwrap(), 1, "only b is left");
    assert_eq!(fx.depths().await.pending, 2);
}

pub async fn retry_now_drops_an_answered_generation_and_dead_letters_what_cannot_be_promoted<
    F: StoreFactory,
>(
    f: &F,
) where
    F::Store: ClaimAdmin,
{
    let (fx, r) = one_answered(f, "done").await;
    let carrier = fx.req("carrier", "t", 3600);
    let answered = wire::stamp_retry(r.member.as_bytes(), Q).expect("stamp");
    let deadline = r.deadline;
    let hostile = format!(
        r#"{{"internal":{{"request_queue_name":"{Q}:claimed","request_token":"h"}},"request_kind":"redis","data":{{"id":"h","deadline":{deadline},"payload":{{}}}}}}"#
    );
    let entries = [answered, b"not json".to_vec(), hostile.into_bytes()];
    for member in &entries {
        fx.submit_and_claim("w1", &carrier).await;
        let parked = fx.park_as("w1", &carrier, member.clone(), 600).await;
        assert_eq!(parked, vec![true]);
    }
    let before = fx.depths().await;
    let outcomes = [
        RetryNow::Answered,
        RetryNow::DeadLettered,
        RetryNow::DeadLettered,
    ];
    for (member, want) in entries.iter().zip(outcomes) {
        let out = fx.store.retry_now(&Member::from(member.clone())).await;
        assert_eq!(out.unwrap(), want, "{}", String::from_utf8_lossy(member));
    }
    assert_eq!(fx.store.retry_depth().await.unwrap(), 0);
    assert!(fx.pending().await.is_empty(), "nothing promoted");
    assert_eq!(fx.depths().await, before, "the queue's own sets untouched");
    let default_queue = fx.store.config().default_queue.clone();
    let dead = fx.store.dead_entries(&default_queue).await.unwrap();
    let mut reasons: Vec<&str> = dead.iter().map(|d| d.reason.as_str()).collect();
    reasons.sort();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons[0].starts_with("retry entry unparsable"),
        "{reasons:?}"
    );
    assert!(reasons[1].contains(":claimed"), "{reasons:?}");
    assert_eq!(fx.result_ids().await, vec!["a"], "one record only");
}

super::admin_checks! {
    admin:
        retry_now_promotes_a_parked_retry_before_it_is_due_at_its_pending_score_once,
        retry_now_drops_an_answered_generation_and_dead_letters_what_cannot_be_promoted;
}
