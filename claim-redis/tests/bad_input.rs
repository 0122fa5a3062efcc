//! Bad input, handled as the brief says: nothing deleted silently, unknown fields kept byte for byte.

mod common;

use claim_core::ListReads;
use claim_core::store::{AckItem, ClaimOutcome, ClaimRequest, ParkItem, Submission};
use claim_core::wire::{self, ErrorCode, MemberError, ResultRecord};
use claim_core::{
    ClaimInspect, ClaimProducer, ClaimStore, Clock, Generation, ManualClock, Member, OwnerToken,
    Score,
};
use claim_redis::RedisStore;
use common::T0;

const Q: &str = "q";
const RESULTS: &str = "result-list";

fn secs(offset: i64) -> i64 {
    (T0.0 / 1000) as i64 + offset
}

/// Submits raw bytes as a (possibly broken) producer would, at `score`.
async fn submit_raw(store: &RedisStore, bytes: &[u8], score: i64) {
    let submission = Submission {
        member: Member::from(bytes.to_vec()),
        generation: Generation::new("raw", ""),
        deadline: score,
        payload: None,
    };
    store.submit(Q, &submission).await.unwrap();
}

fn claim_request(member: &[u8], id: &str, token: &str) -> ClaimRequest {
    ClaimRequest {
        member: Member::from(member.to_vec()),
        generation: Generation::new(id, token),
    }
}

/// The ack of `member`, claimed at `score`.
fn ack_item(member: &[u8], score: i64, (id, token): (&str, &str), record: ResultRecord) -> AckItem {
    AckItem {
        generation: Generation::new(id, token),
        member: Member::from(member.to_vec()),
        score: Score(score as f64),
        result_list: RESULTS.into(),
        record: claim_core::Record::from(record.to_json_bytes()),
        payload_ref: None,
        result_ttl_seconds: 0,
    }
}

/// The member at the head of the pending set.
async fn head(store: &RedisStore) -> Vec<u8> {
    let entries = store.peek(Q, 0, 1).await.unwrap();
    entries[0].member.as_bytes().to_vec()
}

/// Takes a pending member through every way back to pending, checking it
/// returns byte for byte each time: claim and release, claim and a lapsed
/// lease, claim and a retry park promoted. Answers its retry-stamped bytes.
async fn through_every_return(
    store: &RedisStore,
    clock: &ManualClock,
    req: &ClaimRequest,
) -> Vec<u8> {
    let owner = OwnerToken::new("w");
    let bytes = req.member.as_bytes().to_vec();
    store
        .claim(owner.on(Q), std::slice::from_ref(req))
        .await
        .unwrap();
    assert_eq!(
        store.claims(Q).await.unwrap()[0].member.as_bytes(),
        &bytes[..]
    );
    store
        .release(owner.on(Q), std::slice::from_ref(&req.generation))
        .await
        .unwrap();
    assert_eq!(head(store).await, bytes);
    store
        .claim(owner.on(Q), std::slice::from_ref(req))
        .await
        .unwrap();
    clock.advance(31_000);
    assert_eq!(store.reclaim_expired(Q, 10).await.unwrap().redelivered, 1);
    assert_eq!(head(store).await, bytes);
    store
        .claim(owner.on(Q), std::slice::from_ref(req))
        .await
        .unwrap();
    let stamped = wire::stamp_retry(&bytes, Q).unwrap();
    let park = ParkItem {
        generation: req.generation.clone(),
        member: Member::from(stamped.clone()),
        due: clock.now(),
    };
    assert_eq!(
        store.park_retry(owner.on(Q), &[park]).await.unwrap(),
        vec![true]
    );
    assert_eq!(store.promote_due(10).await.unwrap(), 1);
    assert_eq!(head(store).await, stamped);
    stamped
}

#[tokio::test]
async fn members_that_are_not_json_or_have_no_id_go_to_the_dead_set_with_their_reason() {
    let rig = rig_or_skip!();
    let broken: [&[u8]; 3] = [
        b"{not json",
        br#"{"data":{"deadline":1700003600,"payload":{}}}"#,
        b"\xff\xfe",
    ];
    for (i, bytes) in broken.iter().enumerate() {
        submit_raw(&rig.store, bytes, secs(60 + i as i64)).await;
    }
    let good = common::member("ok", "t", secs(3600));
    submit_raw(&rig.store, &good, secs(3600)).await;
    for entry in rig.store.peek(Q, 0, 10).await.unwrap() {
        match wire::parse_member(entry.member.as_bytes()) {
            Ok(_) => {}
            Err(e @ (MemberError::NotJson { .. } | MemberError::MissingId)) => {
                assert!(
                    rig.store
                        .dead_letter(Q, &entry.member, &e.to_string())
                        .await
                        .unwrap()
                );
            }
            Err(e) => panic!("unexpected {e}"),
        }
    }
    let pending = rig.store.peek(Q, 0, 10).await.unwrap();
    assert_eq!(
        pending.iter().map(|e| &e.member).collect::<Vec<_>>(),
        vec![&Member::from(good)],
        "only the good member is left pending"
    );
    let dead = rig.store.dead_entries(Q).await.unwrap();
    let mut kept: Vec<&[u8]> = dead.iter().map(|d| d.member.as_bytes()).collect();
    kept.sort();
    let mut want = broken.to_vec();
    want.sort();
    assert_eq!(kept, want, "every broken member is kept, byte for byte");
    assert!(dead.iter().all(|d| d.at == T0 && !d.reason.is_empty()));
    assert!(
        dead.iter().any(|d| d.reason.contains("no request id")),
        "{dead:?}"
    );
}

#[tokio::test]
async fn a_member_without_a_deadline_is_claimed_and_answered_with_invalid_request() {
    let rig = rig_or_skip!();
    let bytes = br#"{"internal":{"request_token":"t"},"request_kind":"redis","data":{"id":"nodl","payload":{}}}"#;
    submit_raw(&rig.store, bytes, secs(60)).await;
    let id = match wire::parse_member(bytes) {
        Err(MemberError::Invalid { id, field, .. }) => {
            assert_eq!(field, "data.deadline");
            id
        }
        other => panic!("expected an invalid member, got {other:?}"),
    };
    let owner = OwnerToken::new("w");
    let out = rig
        .store
        .claim(owner.on(Q), &[claim_request(bytes, &id, "t")])
        .await
        .unwrap();
    assert!(matches!(out[0], ClaimOutcome::Claimed { .. }));
    let record = ResultRecord::error(
        &id,
        ErrorCode::InvalidRequest,
        "invalid data.deadline: missing",
    );
    let acked = rig
        .store
        .ack(
            owner.on(Q),
            &[ack_item(bytes, secs(60), (&id, "t"), record.clone())],
        )
        .await
        .unwrap();
    assert!(acked[0].pushed && acked[0].claim_dropped);
    assert_eq!(
        rig.store.results(RESULTS).await.unwrap(),
        vec![claim_core::Record::from(record.to_json_bytes())]
    );
    let d = rig.store.depths(Q).await.unwrap();
    assert_eq!((d.pending, d.claimed, d.dead), (0, 0, 0));
}

#[tokio::test]
async fn a_past_deadline_gets_a_lease_ending_thirty_seconds_after_it_and_is_redelivered_unless_answered()
 {
    let rig = rig_or_skip!();
    let deadline = secs(-100);
    let bytes = common::member("late", "t", deadline);
    submit_raw(&rig.store, &bytes, deadline).await;
    let owner = OwnerToken::new("w");
    let out = rig
        .store
        .claim(owner.on(Q), &[claim_request(&bytes, "late", "t")])
        .await
        .unwrap();
    match out[0] {
        ClaimOutcome::Claimed { lease_expiry, .. } => {
            assert_eq!(lease_expiry.0, (deadline as u64 + 30) * 1000)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        rig.store.reclaim_expired(Q, 10).await.unwrap().redelivered,
        1,
        "the lease had already ended"
    );
    rig.store
        .claim(owner.on(Q), &[claim_request(&bytes, "late", "t")])
        .await
        .unwrap();
    let record = ResultRecord::error("late", ErrorCode::DeadlineExceeded, "deadline passed");
    let acked = rig
        .store
        .ack(
            owner.on(Q),
            &[ack_item(&bytes, deadline, ("late", "t"), record)],
        )
        .await
        .unwrap();
    assert!(acked[0].pushed && acked[0].claim_dropped);
}

#[tokio::test]
async fn a_ten_mebibyte_payload_travels_byte_for_byte_through_claim_release_reclaim_and_retry() {
    let rig = rig_or_skip!();
    let big = "x".repeat(10 * 1024 * 1024);
    let deadline = secs(100_000);
    let bytes = format!(
        r#"{{"internal":{{"request_token":"t"}},"request_kind":"redis","data":{{"id":"big","deadline":{deadline},"payload":{{"prompt":"{big}"}}}}}}"#
    )
    .into_bytes();
    submit_raw(&rig.store, &bytes, deadline).await;
    let req = claim_request(&bytes, "big", "t");
    through_every_return(&rig.store, &rig.clock, &req).await;
}

#[tokio::test]
async fn unknown_fields_are_kept_byte_for_byte_and_survive_a_retry_stamp() {
    let rig = rig_or_skip!();
    let deadline = secs(3600);
    let bytes = format!(
        "{{\"future\" : {{\"v\":2}}, \"data\":{{ \"id\":\"u\",\"deadline\":{deadline}.0,\"payload\":{{\"b\":1.50}},\"x-extra\":[true ,null]}},\"internal\":{{\"request_token\":\"t\",\"zzz\":\"keep\"}},\"request_kind\":\"redis\"}}"
    )
    .into_bytes();
    submit_raw(&rig.store, &bytes, deadline).await;
    let req = claim_request(&bytes, "u", "t");
    let stamped = through_every_return(&rig.store, &rig.clock, &req).await;
    let text = String::from_utf8(stamped.clone()).unwrap();
    for kept in [
        r#""future""#,
        r#""x-extra":[true ,null]"#,
        r#""zzz":"keep""#,
        r#""b":1.50"#,
    ] {
        assert!(text.contains(kept), "{kept} in {text}");
    }
}

#[tokio::test]
async fn an_unparsable_retry_entry_is_dead_lettered_on_promotion_not_dropped() {
    let rig = rig_or_skip!();
    let owner = OwnerToken::new("w");
    let carrier = common::member("c", "t", secs(3600));
    submit_raw(&rig.store, &carrier, secs(3600)).await;
    rig.store
        .claim(owner.on(Q), &[claim_request(&carrier, "c", "t")])
        .await
        .unwrap();
    let park = ParkItem {
        generation: Generation::new("c", "t"),
        member: Member::from("garbage in the retry set"),
        due: T0,
    };
    rig.store.park_retry(owner.on(Q), &[park]).await.unwrap();
    assert_eq!(rig.store.promote_due(10).await.unwrap(), 1);
    let dead = rig
        .store
        .dead_entries(&rig.store.config().default_queue)
        .await
        .unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].member.as_bytes(), b"garbage in the retry set");
    assert!(
        dead[0].reason.starts_with("retry entry unparsable"),
        "{}",
        dead[0].reason
    );
    assert_eq!(rig.store.retry_depth().await.unwrap(), 0);
}
