//! Checks of reclaim: expired leases back to pending, the delivery limit (and the payload it ends), and what a redelivery counts.

use super::StoreFactory;
use super::payloads::payload_is;
use super::returns::{park, redeliveries};
use super::support::{
    Q, RESULTS, Req, config, fixture, limited, limited_with_list, one_claimed, owner,
};
use claim_core::store::Submission;
use claim_core::types::{Member, Millis, Score};
use claim_core::wire::Envelope;
use claim_core::{ClaimInspect, ClaimStore};
use claim_core::{ClaimProducer, ListReads, Record};

pub async fn reclaim_leaves_live_leases_alone(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    fx.claim_batch("w1", 3).await;
    fx.clock.set(fx.at(29));
    let report = fx.store.reclaim_expired(Q, 100).await.unwrap();
    assert_eq!(
        (report.redelivered, report.dead_lettered, report.more),
        (0, 0, false)
    );
    assert_eq!(fx.depths().await.claimed, 3);
}

pub async fn reclaim_returns_an_expired_claim_to_pending_and_counts_the_redelivery(
    f: &impl StoreFactory,
) {
    let (fx, r) = one_claimed(f, "dead-worker", 3600).await;
    fx.clock.set(fx.at(30));
    assert_eq!(
        fx.reclaim_all().await.redelivered,
        1,
        "a lease expires at its expiry instant"
    );
    let pending = fx.store.peek(Q, 0, 10).await.unwrap();
    assert_eq!(
        (pending[0].member.clone(), pending[0].score),
        (r.member.clone(), Score(r.deadline as f64))
    );
    assert_eq!(
        redeliveries(&fx.claim("survivor", r.one()).await[0]),
        Some(1)
    );
    assert_eq!(fx.store.claims(Q).await.unwrap()[0].redeliveries, 1);
}

pub async fn a_crashed_owners_request_is_redelivered_and_acked_exactly_once(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let rs = fx.reqs(10);
    fx.submit(&rs).await;
    fx.claim("crashed", &rs[..6]).await;
    fx.claim("alive", &rs[6..]).await;
    fx.clock.set(fx.at(15));
    fx.renew("alive", &rs[6..]).await;
    assert_eq!(fx.reclaim_at(31).await.redelivered, 6);
    let again = fx.claim("alive", &rs).await;
    assert_eq!(
        again.iter().filter(|o| redeliveries(o) == Some(1)).count(),
        6
    );
    fx.ack("alive", &rs, "done").await;
    let mut ids = fx.result_ids().await;
    ids.sort();
    let mut want: Vec<_> = rs.iter().map(|r| r.generation.id.clone()).collect();
    want.sort();
    assert_eq!(ids, want, "every request has exactly one record");
}

pub async fn reclaim_at_the_delivery_limit_writes_one_record_and_dead_letters(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await; // max_deliveries = 3
    let r = fx.req("poison", "t", 100_000);
    fx.submit(r.one()).await;
    for round in 1..=3u64 {
        fx.claim("crasher", r.one()).await;
        fx.reclaim_at(31 * round).await;
    }
    let d = fx.depths().await;
    assert_eq!((d.pending, d.claimed, d.dead), (0, 0, 1));
    let dead = fx.store.dead_entries(Q).await.unwrap();
    assert_eq!(
        dead[0].member, r.member,
        "the member is kept for inspection and redrive"
    );
    assert!(
        dead[0].reason.contains("delivery limit"),
        "reason: {}",
        dead[0].reason
    );
    let results = fx.results().await;
    assert_eq!(results.len(), 1);
    assert_eq!(
        (results[0]["id"].as_str(), results[0]["error_code"].as_str()),
        (Some("poison"), Some("DELIVERY_LIMIT"))
    );
    assert!(fx.store.is_terminal(&r.generation).await.unwrap());
}

pub async fn delivery_limit_record_goes_to_the_queues_configured_list(f: &impl StoreFactory) {
    let fx = fixture(f, limited_with_list(1, "queue-specific-results")).await;
    let r = fx.req("poison", "t", 3600);
    fx.submit_and_claim("crasher", &r).await;
    assert_eq!(fx.reclaim_at(31).await.dead_lettered, 1);
    assert_eq!(
        fx.store
            .results("queue-specific-results")
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(fx.store.results(RESULTS).await.unwrap().is_empty());
}

pub async fn a_resolved_members_delivery_limit_record_keeps_its_own_list_as_go_routes(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, limited_with_list(1, "queue-specific-results")).await;
    // Go's routing: a member stamped resolved keeps its own list; an
    // unresolved one takes the queue's configured list over its own.
    let routed = |id: &str, resolved: bool| {
        let mut r = fx.req(id, "t", 3600);
        let mut value: serde_json::Value = serde_json::from_slice(r.member.as_bytes()).unwrap();
        value["internal"]["result_queue_name"] = "own-results".into();
        value["internal"]["result_routing_resolved"] = resolved.into();
        r.member = Member::from(value.to_string().into_bytes());
        r
    };
    let (resolved, unresolved) = (routed("resolved", true), routed("unresolved", false));
    fx.submit(&[resolved.clone(), unresolved.clone()]).await;
    fx.claim("crasher", &[resolved, unresolved]).await;
    assert_eq!(fx.reclaim_at(31).await.dead_lettered, 2);
    let ids = |records: Vec<Record>| -> Vec<String> {
        records
            .iter()
            .map(|m| {
                let v: serde_json::Value = serde_json::from_slice(m.as_bytes()).unwrap();
                v["id"].as_str().unwrap().to_owned()
            })
            .collect()
    };
    assert_eq!(
        ids(fx.store.results("own-results").await.unwrap()),
        ["resolved"]
    );
    assert_eq!(
        ids(fx.store.results("queue-specific-results").await.unwrap()),
        ["unresolved"]
    );
}

pub async fn unlimited_deliveries_never_dead_letter(f: &impl StoreFactory) {
    let fx = fixture(f, limited(0)).await;
    let r = fx.req("a", "t", 100_000);
    fx.submit(r.one()).await;
    for round in 1..=12u64 {
        fx.claim("crasher", r.one()).await;
        assert_eq!(fx.reclaim_at(31 * round).await.dead_lettered, 0);
    }
    assert_eq!(redeliveries(&fx.claim("w", r.one()).await[0]), Some(12));
}

pub async fn reclaim_works_in_batches_and_says_when_more_remain(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    fx.claim_batch("gone", 25).await;
    fx.clock.set(fx.at(31));
    let first = fx.store.reclaim_expired(Q, 10).await.unwrap();
    assert_eq!((first.redelivered, first.more), (10, true));
    let second = fx.store.reclaim_expired(Q, 10).await.unwrap();
    assert_eq!((second.redelivered, second.more), (10, true));
    let third = fx.store.reclaim_expired(Q, 10).await.unwrap();
    assert_eq!((third.redelivered, third.more), (5, false));
    assert_eq!(fx.depths().await.pending, 25);
}

pub async fn redelivery_counts_survive_release_and_retry(f: &impl StoreFactory) {
    let fx = fixture(f, limited(0)).await;
    let r = fx.req("a", "t", 100_000);
    fx.lapse("crasher", &r).await;
    fx.claim("w", r.one()).await;
    fx.release("w", r.one()).await;
    assert_eq!(redeliveries(&fx.claim("w", r.one()).await[0]), Some(1));
    park(&fx, "w", &r, 40).await;
    fx.clock.set(fx.at(40));
    fx.store.promote_due(10).await.unwrap();
    let promoted = fx.store.peek(Q, 0, 1).await.unwrap().remove(0);
    let item = claim_core::store::ClaimRequest {
        member: promoted.member,
        generation: r.generation.clone(),
    };
    let out = fx.store.claim(owner("w").on(Q), &[item]).await.unwrap();
    assert_eq!(
        redeliveries(&out[0]),
        Some(1),
        "parking for retry keeps the count"
    );
}

pub async fn an_expired_claim_of_an_answered_generation_is_dropped_not_redelivered(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, limited(2)).await;
    let r = fx.req("a", "t", 100_000);
    fx.lapse("slow", &r).await;
    fx.claim("next", r.one()).await;
    // The stale owner answers; then the new owner dies without acking.
    fx.ack("slow", r.one(), "answered").await;
    let report = fx.reclaim_at(62).await;
    assert_eq!(
        (report.redelivered, report.dead_lettered),
        (0, 0),
        "a finished request is neither redelivered nor poison"
    );
    let d = fx.depths().await;
    assert_eq!((d.pending, d.claimed, d.dead), (0, 0, 0));
    assert_eq!(fx.result_ids().await, vec!["a"]);
}

/// `id` as Go's producer submits it with payload keys on: the member has
/// `"payload":null` and `internal.payload_ref`; the payload is stored apart.
fn by_reference(start: Millis, id: &str) -> (Req, Submission) {
    let deadline = (start.0 / 1000) as i64 + 3600;
    let payload = serde_json::json!({"model": "m", "prompt": id});
    let mut envelope = Envelope::new(id, "t", deadline, payload);
    envelope.internal.request_queue_name = Q.to_owned();
    envelope.internal.result_queue_name = RESULTS.to_owned();
    let sub = envelope.submission_by_reference();
    let req = Req {
        member: sub.member.clone(),
        generation: sub.generation.clone(),
        deadline,
    };
    (req, sub)
}

/// Whether the payload of `r`, stored apart, is still there.
pub async fn a_request_ended_at_the_delivery_limit_leaves_no_payload_key_and_a_redelivered_one_keeps_it(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, limited(2)).await;
    let (poison, poison_sub) = by_reference(fx.start, "p-ref");
    let (survivor, survivor_sub) = by_reference(fx.start, "s-ref");
    // Inline payload, at the limit in the same batch, ahead of `poison`.
    let inline = fx.req("a-inline", "t", 3600);
    fx.store.submit(Q, &poison_sub).await.unwrap();
    fx.store.submit(Q, &survivor_sub).await.unwrap();
    fx.submit(inline.one()).await;
    let crashers = [inline.clone(), poison.clone()];
    fx.claim("crasher", &crashers).await;
    assert_eq!(fx.reclaim_at(31).await.redelivered, 2);
    payload_is(
        &fx.store,
        &poison,
        true,
        "a redelivered request keeps its payload",
    )
    .await;
    let all = [inline.clone(), poison.clone(), survivor.clone()];
    fx.claim("crasher", &all).await;
    let report = fx.reclaim_at(62).await;
    assert_eq!((report.redelivered, report.dead_lettered), (1, 2));
    payload_is(&fx.store, &poison, false, "DELIVERY_LIMIT answered it").await;
    payload_is(&fx.store, &survivor, true, "its next holder needs it").await;
    let mut ids = fx.result_ids().await;
    ids.sort();
    assert_eq!(ids, vec!["a-inline", "p-ref"]);
    assert_eq!(fx.pending().await, vec![survivor.member.clone()]);
}

pub async fn an_expired_claim_of_an_answered_generation_leaves_no_payload_key(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, limited(2)).await;
    let (at_limit, at_limit_sub) = by_reference(fx.start, "a-limit");
    let (below, below_sub) = by_reference(fx.start, "b-below");
    fx.store.submit(Q, &at_limit_sub).await.unwrap();
    fx.claim("slow", at_limit.one()).await;
    assert_eq!(fx.reclaim_at(31).await.redelivered, 1);
    fx.store.submit(Q, &below_sub).await.unwrap();
    let both = [at_limit.clone(), below.clone()];
    fx.claim("next", &both).await;
    // A stale owner answers both; a non-owner's ack leaves the payloads to
    // the holder, which then dies without acking.
    fx.ack("slow", &both, "answered").await;
    payload_is(&fx.store, &at_limit, true, "").await;
    payload_is(&fx.store, &below, true, "").await;
    let report = fx.reclaim_at(62).await;
    assert_eq!((report.redelivered, report.dead_lettered), (0, 0));
    payload_is(&fx.store, &at_limit, false, "answered, at the limit").await;
    payload_is(&fx.store, &below, false, "answered, below the limit").await;
    let mut ids = fx.result_ids().await;
    ids.sort();
    assert_eq!(ids, vec!["a-limit", "b-below"]);
}

super::checks! {
    clock_free:
        reclaim_leaves_live_leases_alone;
    clocked:
        a_resolved_members_delivery_limit_record_keeps_its_own_list_as_go_routes,
        reclaim_returns_an_expired_claim_to_pending_and_counts_the_redelivery,
        a_crashed_owners_request_is_redelivered_and_acked_exactly_once,
        reclaim_at_the_delivery_limit_writes_one_record_and_dead_letters,
        delivery_limit_record_goes_to_the_queues_configured_list,
        unlimited_deliveries_never_dead_letter,
        reclaim_works_in_batches_and_says_when_more_remain,
        an_expired_claim_of_an_answered_generation_is_dropped_not_redelivered,
        redelivery_counts_survive_release_and_retry,
        a_request_ended_at_the_delivery_limit_leaves_no_payload_key_and_a_redelivered_one_keeps_it,
        an_expired_claim_of_an_answered_generation_leaves_no_payload_key;
}
