//! Checks of payloads stored apart, the enqueue sequence and the result list's TTL: what the Go producer and consumer rely on.

use super::StoreFactory;
use super::returns::park;
use super::support::{Fixture, Q, RESULTS, Req, config, fixture, owner};
use crate::CheckedStore;
use claim_core::store::{AckItem, AckOutcome, ClaimOutcome, Submission};
use claim_core::types::{Generation, Member, Millis, Score};
use claim_core::wire::{self, Envelope};
use claim_core::{ClaimProducer, ListReads};
use claim_core::{ClaimStore, Payload, StoreError};

/// A request as Go's producer writes it with payload keys on: the member
/// has `"payload":null` and `internal.payload_ref`; the payload is apart.
pub(super) fn by_reference(start: Millis, id: &str, deadline_in: i64) -> (Req, Payload) {
    let deadline = (start.0 / 1000) as i64 + deadline_in;
    let payload = serde_json::json!({"model": "m", "prompt": id});
    let (envelope, bytes) = Envelope::new(id, "t", deadline, payload).by_reference();
    let req = Req {
        member: Member::from(envelope.to_bytes()),
        generation: Generation::new(id, "t"),
        deadline,
    };
    (req, Payload::from(bytes))
}

pub(super) fn submission(r: &Req, payload: Payload) -> Submission {
    Submission {
        payload: Some(payload),
        ..r.submission()
    }
}

fn payload_ref(r: &Req) -> String {
    wire::payload_key(&r.generation.id, &r.generation.token)
}

/// The ack of `r` to `list`, naming its payload key and the list's TTL.
fn ack_item(r: &Req, list: &str, ttl: u64) -> AckItem {
    AckItem {
        payload_ref: Some(payload_ref(r)),
        result_ttl_seconds: ttl,
        ..r.ack_item(list, "done")
    }
}

/// `who`'s ack of one item.
async fn ack<S: CheckedStore>(fx: &Fixture<S>, who: &str, item: AckItem) -> AckOutcome {
    let out = fx.store.ack(owner(who).on(Q), &[item]).await.unwrap();
    out[0]
}

/// A fresh store where `who` holds `r`, whose payload is stored apart.
async fn claimed_by_reference<F: StoreFactory>(f: &F, who: &str) -> (Fixture<F::Store>, Req) {
    let fx = fixture(f, config()).await;
    let (r, payload) = by_reference(fx.start, "a", 3600);
    fx.store.submit(Q, &submission(&r, payload)).await.unwrap();
    fx.claim(who, r.one()).await;
    (fx, r)
}

/// Whether `r`'s payload key is still stored.
pub(super) async fn stored<S: CheckedStore>(store: &S, r: &Req) -> bool {
    let got = store.fetch_payloads(&[payload_ref(r)]).await.unwrap();
    got[0].is_some()
}

/// Asserts whether `r`'s payload key is still stored, saying `why`.
pub(super) async fn payload_is<S: CheckedStore>(store: &S, r: &Req, kept: bool, why: &str) {
    assert_eq!(stored(store, r).await, kept, "{}: {why}", r.generation.id);
}

pub async fn fetch_returns_stored_payloads_in_order_and_none_where_missing(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let (a, pa) = by_reference(fx.start, "a", 3600);
    let (b, _) = by_reference(fx.start, "b", 3600);
    let (c, _) = by_reference(fx.start, "c", 3601);
    fx.store
        .submit(Q, &submission(&a, pa.clone()))
        .await
        .unwrap();
    fx.store.submit(Q, &b.submission()).await.unwrap();
    let empty = Payload::from(Vec::new());
    fx.store
        .submit(Q, &submission(&c, empty.clone()))
        .await
        .unwrap();
    let refs = [payload_ref(&a), payload_ref(&b), payload_ref(&c)];
    let got = fx.store.fetch_payloads(&refs).await.unwrap();
    assert_eq!(got, vec![Some(pa), None, Some(empty)], "one call, in order");
    assert_eq!(fx.store.fetch_payloads(&[]).await.unwrap(), vec![]);
    assert_eq!(
        String::from_utf8_lossy(got_payload(&fx.store, &a).await.as_bytes()),
        r#"{"model":"m","prompt":"a"}"#
    );
}

async fn got_payload<S: CheckedStore>(store: &S, r: &Req) -> Payload {
    let got = store.fetch_payloads(&[payload_ref(r)]).await.unwrap();
    got.into_iter().next().flatten().expect("a payload")
}

pub async fn the_owners_ack_deletes_the_payload_key(f: &impl StoreFactory) {
    let (fx, r) = claimed_by_reference(f, "w1").await;
    assert!(stored(&fx.store, &r).await);
    let out = ack(&fx, "w1", ack_item(&r, RESULTS, 0)).await;
    assert!(out.pushed && out.claim_dropped);
    assert!(!stored(&fx.store, &r).await, "the owner's ack deletes it");
}

pub async fn a_stale_owners_ack_leaves_the_payload_to_the_holder(f: &impl StoreFactory) {
    let (fx, r) = claimed_by_reference(f, "w1").await;
    let stale = ack(&fx, "w2", ack_item(&r, RESULTS, 0)).await;
    assert!(stale.pushed && !stale.claim_dropped);
    assert!(stored(&fx.store, &r).await, "a non-owner leaves it");
    let holder = ack(&fx, "w1", ack_item(&r, RESULTS, 0)).await;
    assert!(!holder.pushed && holder.claim_dropped);
    assert!(!stored(&fx.store, &r).await, "the holder's ack ends it");
}

pub async fn a_stale_owners_late_ack_that_takes_the_reclaimed_pending_copy_deletes_the_payload(
    f: &impl StoreFactory,
) {
    let (fx, r) = claimed_by_reference(f, "w1").await;
    // The lease runs out and the reclaimer puts the request back in pending.
    assert_eq!(fx.reclaim_at(31).await.redelivered, 1);
    assert!(
        stored(&fx.store, &r).await,
        "a redelivered request keeps it"
    );
    // The stale owner's record lands and takes the pending copy: the
    // request is answered and nobody is left to delete the payload.
    let late = ack(&fx, "w1", ack_item(&r, RESULTS, 0)).await;
    assert!(late.pushed && !late.claim_dropped);
    assert!(fx.pending().await.is_empty());
    assert!(
        !stored(&fx.store, &r).await,
        "the answered request's payload is gone"
    );
}

pub async fn a_repeated_submit_of_an_answered_request_leaves_no_payload_once_claim_drops_it(
    f: &impl StoreFactory,
) {
    let (fx, r) = claimed_by_reference(f, "w1").await;
    let payload = got_payload(&fx.store, &r).await;
    assert!(ack(&fx, "w1", ack_item(&r, RESULTS, 0)).await.pushed);
    // A producer whose submit timed out after it landed repeats it: the
    // member and the payload are back, for a request already answered.
    fx.store
        .submit(Q, &submission(&r, payload.clone()))
        .await
        .unwrap();
    assert!(stored(&fx.store, &r).await);
    let out = fx.claim("w2", r.one()).await;
    assert_eq!(out, vec![ClaimOutcome::DuplicateDropped]);
    assert!(
        !stored(&fx.store, &r).await,
        "nobody is left to delete the answered request's payload"
    );
    // A copy of a generation someone still holds leaves the payload to
    // that holder (it may not have fetched it yet).
    let (fx, r) = claimed_by_reference(f, "w1").await;
    fx.store.submit(Q, &submission(&r, payload)).await.unwrap();
    let out = fx.claim("w2", r.one()).await;
    assert_eq!(out, vec![ClaimOutcome::DuplicateDropped]);
    assert!(stored(&fx.store, &r).await, "the holder still needs it");
}

pub async fn a_dead_lettered_ack_leaves_the_payload_for_a_redrive(f: &impl StoreFactory) {
    let (fx, r) = claimed_by_reference(f, "w1").await;
    // The queue's own pending set cannot take records.
    let out = ack(&fx, "w1", ack_item(&r, Q, 0)).await;
    assert!(out.dead_lettered && out.claim_dropped);
    assert!(stored(&fx.store, &r).await);
}

pub async fn retry_parking_leaves_the_payload(f: &impl StoreFactory) {
    let (fx, r) = claimed_by_reference(f, "w1").await;
    assert_eq!(park(&fx, "w1", &r, 10).await, vec![true]);
    assert!(stored(&fx.store, &r).await);
}

pub async fn a_result_ttl_expires_the_list_only_when_a_record_is_pushed(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let r1 = fx.req("r1", "t", 3600);
    fx.submit_and_claim("w1", &r1).await;
    let first = ack(&fx, "w1", ack_item(&r1, RESULTS, 0)).await;
    assert!(first.pushed);
    assert_eq!(fx.store.list_ttl(RESULTS).await.unwrap(), None);
    let again = ack(&fx, "w1", ack_item(&r1, RESULTS, 600)).await;
    assert!(!again.pushed);
    assert_eq!(
        fx.store.list_ttl(RESULTS).await.unwrap(),
        None,
        "a suppressed record sets no expiry"
    );
    let r2 = fx.req("r2", "t", 3600);
    fx.submit_and_claim("w1", &r2).await;
    let pushed = ack(&fx, "w1", ack_item(&r2, RESULTS, 600)).await;
    assert!(pushed.pushed);
    let ttl = fx.store.list_ttl(RESULTS).await.unwrap();
    assert!(matches!(ttl, Some(t) if t > 500 && t <= 600), "{ttl:?}");
}

pub async fn enqueue_stamps_one_two_three_per_queue_and_deadline_and_ties_keep_submission_order(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let mut stamped = Vec::new();
    for id in ["c", "a", "b"] {
        let r = fx.req(id, "t", 3600);
        stamped.push(fx.store.enqueue(Q, &r.submission()).await.unwrap());
    }
    let seqs: Vec<_> = stamped.iter().map(seq_of).collect();
    assert_eq!(seqs, vec![Some(1), Some(2), Some(3)]);
    let later = fx.req("d", "t", 3601);
    let other = fx.req("e", "t", 3600);
    let d = fx.store.enqueue(Q, &later.submission()).await.unwrap();
    let e = fx.store.enqueue("other-queue", &other.submission()).await;
    assert_eq!(seq_of(&d), Some(1), "a new deadline counts from 1");
    assert_eq!(seq_of(&e.unwrap()), Some(1), "another queue counts from 1");
    let pending = fx.store.peek(Q, 0, 10).await.unwrap();
    let members: Vec<_> = pending.iter().map(|p| p.member.clone()).collect();
    stamped.push(d);
    assert_eq!(
        members, stamped,
        "ties keep submission order, bytes as returned"
    );
    let deadline = fx.req("x", "t", 3600).deadline;
    let scores: Vec<_> = pending.iter().map(|p| p.score).collect();
    let want: Vec<_> = [
        (deadline, 1),
        (deadline, 2),
        (deadline, 3),
        (deadline + 1, 1),
    ]
    .map(|(d, s)| wire::queue_score(d, Some(s)))
    .into();
    assert_eq!(scores, want);
}

fn seq_of(m: &Member) -> Option<i64> {
    wire::parse_member(m.as_bytes()).unwrap().enqueue_seq
}

pub async fn members_are_scored_by_deadline_plus_their_sequence_fraction(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let (r, payload) = by_reference(fx.start, "p", 3600);
    let enqueued = fx.store.enqueue(Q, &submission(&r, payload.clone())).await;
    let enqueued = enqueued.unwrap();
    let parsed = wire::parse_member(enqueued.as_bytes()).unwrap();
    assert_eq!(parsed.enqueue_seq, Some(1));
    assert_eq!(
        parsed.payload_ref,
        Some(payload_ref(&r)),
        "payload_ref kept"
    );
    assert_eq!(got_payload(&fx.store, &r).await, payload, "payload stored");
    // A member submitted as is with no sequence scores its bare deadline,
    // ahead of its stamped peers; one carrying a sequence scores by it.
    let bare = fx.req("bare", "t", 3600);
    fx.submit(bare.one()).await;
    let mut seq7 = Envelope::new("s7", "t", r.deadline, serde_json::json!({}));
    seq7.internal.enqueue_seq = 7;
    let s7 = Req {
        member: Member::from(seq7.to_bytes()),
        generation: Generation::new("s7", "t"),
        deadline: r.deadline,
    };
    fx.submit(s7.one()).await;
    let pending = fx.store.peek(Q, 0, 10).await.unwrap();
    let got: Vec<_> = pending
        .iter()
        .map(|p| (p.member.clone(), p.score))
        .collect();
    let d = r.deadline as f64;
    let want = vec![
        (bare.member, Score(d)),
        (enqueued, Score(d + 1.0 / 2_097_152.0)),
        (s7.member, Score(d + 7.0 / 2_097_152.0)),
    ];
    assert_eq!(got, want);
}

pub async fn enqueue_refuses_a_member_that_is_not_an_object_and_changes_nothing(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let bad = Submission {
        member: Member::from("[1,2]"),
        ..fx.req("x", "t", 3600).submission()
    };
    let err = fx.store.enqueue(Q, &bad).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput { .. }), "{err}");
    assert_eq!(fx.depths().await.pending, 0);
}

pub async fn a_promoted_retry_returns_at_its_deadline_plus_sequence_score(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let r = fx.req("a", "t", 3600);
    let enqueued = fx.store.enqueue(Q, &r.submission()).await.unwrap();
    let r = Req {
        member: enqueued,
        ..r
    };
    fx.claim("w1", r.one()).await;
    assert_eq!(park(&fx, "w1", &r, 10).await, vec![true]);
    fx.clock.set(fx.at(11));
    assert_eq!(fx.store.promote_due(10).await.unwrap(), 1);
    let pending = fx.store.peek(Q, 0, 10).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].score, wire::queue_score(r.deadline, Some(1)));
    assert_eq!(seq_of(&pending[0].member), Some(1), "the sequence is kept");
}

pub async fn a_stored_payload_expires_ten_minutes_after_the_deadline(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let (r, payload) = by_reference(fx.start, "a", 60);
    fx.store.enqueue(Q, &submission(&r, payload)).await.unwrap();
    fx.clock.set(fx.at(60 + 599));
    assert!(stored(&fx.store, &r).await, "kept through the grace period");
    fx.clock.set(fx.at(60 + 600));
    assert!(
        !stored(&fx.store, &r).await,
        "gone ten minutes after the deadline"
    );
}

pub async fn released_and_reclaimed_members_keep_their_sequence_score_exactly(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    let mut rs = Vec::new();
    for id in ["a", "b"] {
        let r = fx.req(id, "t", 3600);
        let member = fx.store.enqueue(Q, &r.submission()).await.unwrap();
        rs.push(Req { member, ..r });
    }
    fx.claim("w1", &rs[..1]).await;
    fx.claim("w2", &rs[1..]).await;
    assert_eq!(fx.release("w1", &rs[..1]).await, vec![true]);
    let report = fx.reclaim_at(31).await;
    assert_eq!(report.redelivered, 1, "w2's lease lapsed");
    let pending = fx.store.peek(Q, 0, 10).await.unwrap();
    let got: Vec<_> = pending
        .iter()
        .map(|p| (p.member.clone(), p.score))
        .collect();
    let d = rs[0].deadline;
    let want = vec![
        (rs[0].member.clone(), wire::queue_score(d, Some(1))),
        (rs[1].member.clone(), wire::queue_score(d, Some(2))),
    ];
    assert_eq!(got, want);
}

pub async fn the_sequence_restarts_once_its_counter_expires_an_hour_after_the_deadline(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    // Three requests with one deadline (distinct, so each enqueue adds a member).
    let [a, b, c] = ["a", "b", "c"].map(|id| fx.req(id, "t", 60).submission());
    let first = fx.store.enqueue(Q, &a).await.unwrap();
    fx.clock.set(fx.at(60 + 3599));
    let kept = fx.store.enqueue(Q, &b).await.unwrap();
    fx.clock.set(fx.at(60 + 3600));
    let restarted = fx.store.enqueue(Q, &c).await.unwrap();
    let seqs: Vec<_> = [&first, &kept, &restarted].map(seq_of).into();
    assert_eq!(seqs, vec![Some(1), Some(2), Some(1)]);
}

super::checks! {
    clock_free:
        fetch_returns_stored_payloads_in_order_and_none_where_missing,
        the_owners_ack_deletes_the_payload_key,
        a_stale_owners_ack_leaves_the_payload_to_the_holder,
        a_repeated_submit_of_an_answered_request_leaves_no_payload_once_claim_drops_it,
        a_dead_lettered_ack_leaves_the_payload_for_a_redrive,
        retry_parking_leaves_the_payload,
        a_result_ttl_expires_the_list_only_when_a_record_is_pushed,
        enqueue_stamps_one_two_three_per_queue_and_deadline_and_ties_keep_submission_order,
        members_are_scored_by_deadline_plus_their_sequence_fraction,
        enqueue_refuses_a_member_that_is_not_an_object_and_changes_nothing;
    clocked:
        a_stale_owners_late_ack_that_takes_the_reclaimed_pending_copy_deletes_the_payload,
        a_promoted_retry_returns_at_its_deadline_plus_sequence_score,
        a_stored_payload_expires_ten_minutes_after_the_deadline,
        released_and_reclaimed_members_keep_their_sequence_score_exactly,
        the_sequence_restarts_once_its_counter_expires_an_hour_after_the_deadline;
}
