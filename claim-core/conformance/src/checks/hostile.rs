//! Checks of members written to hurt: whoever can `ZADD` to a queue chooses every byte, and no member may touch a key that is not its own generation's.
//!
//! Each check submits ordinary requests beside a hostile one and asserts
//! that the ordinary ones are untouched (still pending, their records
//! still in the list) whatever the hostile member names, and that the
//! hostile one still ends in one place.

use super::StoreFactory;
use super::support::{Fixture, Q, RESULTS, Req, config, fixture, limited};
use crate::CheckedStore;
use claim_core::store::ClaimOutcome;
use claim_core::types::{Generation, Member, Millis};

/// The keys a hostile member names as its `internal.payload_ref`: the
/// queue's pending set, its bookkeeping, the result list, the retry set.
fn internal_keys() -> Vec<String> {
    let retry = claim_core::store::StoreConfig::default().retry_set;
    vec![
        Q.to_owned(),
        RESULTS.to_owned(),
        format!("{Q}:claimed"),
        format!("{Q}:claims-idx"),
        retry,
    ]
}

/// A member of generation `id`/`t` in the Go producer's by-reference
/// shape (`"payload":null`), whose `internal.payload_ref` names `key`.
fn naming_as_payload(start: Millis, id: &str, key: &str) -> Req {
    let deadline = (start.0 / 1000) as i64 + 3600;
    let value = serde_json::json!({
        "internal": {"request_token": "t", "retry_count": 0, "payload_ref": key},
        "request_kind": "redis",
        "data": {"id": id, "created": deadline - 3600, "deadline": deadline, "payload": null},
    });
    Req {
        member: Member::from(value.to_string().into_bytes()),
        generation: Generation::new(id, "t"),
        deadline,
    }
}

/// Ordinary requests, pending, and one answered ordinary request whose
/// record sits unread in the list: what a hostile member must not touch.
async fn bystanders<S: CheckedStore>(fx: &Fixture<S>) -> Vec<Req> {
    let answered = fx.req("answered", "t", 7200);
    fx.answer("w0", &answered, "read me").await;
    let waiting = fx.reqs(3);
    fx.submit(&waiting).await;
    waiting
}

/// The bystanders are where [`bystanders`] left them.
async fn assert_untouched<S: CheckedStore>(fx: &Fixture<S>, waiting: &[Req], what: &str) {
    let pending = fx.pending().await;
    for r in waiting {
        assert!(
            pending.contains(&r.member),
            "{what}: ordinary request {} is no longer pending",
            r.generation
        );
    }
    assert!(
        fx.result_ids().await.contains(&"answered".to_owned()),
        "{what}: the unread record in the result list is gone"
    );
}

pub async fn a_duplicate_of_an_answered_generation_naming_an_internal_key_as_its_payload_deletes_nothing(
    f: &impl StoreFactory,
) {
    for key in internal_keys() {
        let fx = fixture(f, config()).await;
        let waiting = bystanders(&fx).await;
        let ordinary = fx.req("h", "t", 3600);
        fx.answer("w1", &ordinary, "done").await;
        // The same generation comes back under bytes naming an internal key.
        let hostile = naming_as_payload(fx.start, "h", &key);
        fx.submit(hostile.one()).await;
        let out = fx.claim("w2", hostile.one()).await;
        assert_eq!(out, vec![ClaimOutcome::DuplicateDropped], "{key}");
        assert_untouched(&fx, &waiting, &key).await;
    }
}

pub async fn a_member_naming_an_internal_key_as_its_payload_reaches_the_delivery_limit_deleting_nothing(
    f: &impl StoreFactory,
) {
    for key in internal_keys() {
        let fx = fixture(f, limited(1)).await;
        let waiting = bystanders(&fx).await;
        let hostile = naming_as_payload(fx.start, "h", &key);
        fx.submit_and_claim("crasher", &hostile).await;
        let report = fx.reclaim_at(31).await;
        assert_eq!(report.dead_lettered, 1, "{key}: the limit ends it");
        assert_untouched(&fx, &waiting, &key).await;
        let d = fx.depths().await;
        assert_eq!((d.claimed, d.dead), (0, 1), "{key}");
    }
}

/// Ids and tokens holding the bytes key encodings and hash tags use.
fn odd_generations() -> Vec<(String, String)> {
    let long = "x".repeat(300);
    [
        ("~", "~"),
        ("{q}", "t"),
        ("a}b{", "{}"),
        ("1:a", "b:c"),
        ("1", "a:b:c"),
        ("a|b|1", "|1|2"),
        ("é☃", "\u{2028}"),
        (long.as_str(), long.as_str()),
        ("plain", ""),
    ]
    .into_iter()
    .map(|(id, token)| (id.to_owned(), token.to_owned()))
    .collect()
}

pub async fn ids_and_tokens_with_odd_bytes_each_get_exactly_one_record(f: &impl StoreFactory) {
    let fx = fixture(f, config()).await;
    let all: Vec<Req> = odd_generations()
        .iter()
        .enumerate()
        .map(|(i, (id, token))| fx.req(id, token, 3600 + i as i64))
        .collect();
    fx.submit(&all).await;
    let claimed = fx.claim("w1", &all).await;
    assert!(
        claimed
            .iter()
            .all(|c| matches!(c, ClaimOutcome::Claimed { .. })),
        "{claimed:?}"
    );
    assert_eq!(fx.depths().await.claimed as usize, all.len());
    let first = fx.ack("w1", &all, "done").await;
    assert!(
        first.iter().all(|o| o.pushed && o.claim_dropped),
        "{first:?}"
    );
    // Everything again, as a stale replica would: no second record.
    fx.submit(&all).await;
    let again = fx.claim("w2", &all).await;
    assert!(
        again.iter().all(|c| *c == ClaimOutcome::DuplicateDropped),
        "{again:?}"
    );
    let ids = fx.result_ids().await;
    assert_eq!(ids.len(), all.len(), "one record each: {ids:?}");
    let d = fx.depths().await;
    assert_eq!((d.pending, d.claimed, d.dead), (0, 0, 0));
}

pub async fn a_generation_whose_id_and_token_split_differently_is_not_suppressed(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    // `a` + `b:c` and `a:b` + `c` share every byte of "id:token".
    let one = fx.req("a", "b:c", 3600);
    let other = fx.req("a:b", "c", 3601);
    fx.answer("w1", &one, "one").await;
    fx.submit(other.one()).await;
    let out = fx.claim("w1", other.one()).await;
    assert!(matches!(out[0], ClaimOutcome::Claimed { .. }), "{out:?}");
    let acked = fx.ack("w1", other.one(), "other").await;
    assert!(
        acked[0].pushed,
        "a generation of its own gets its own record"
    );
    assert_eq!(fx.result_ids().await, vec!["a", "a:b"]);
}

pub async fn a_claim_of_a_generation_whose_id_or_token_holds_a_nul_claims_nothing(
    f: &impl StoreFactory,
) {
    let fx = fixture(f, config()).await;
    // Built so that `<id>\0<token>` is claim-redis's internal placeholder.
    let placeholder = "\u{0}claim-redis encoding hint: never a claim key, longer than 64 bytes~";
    let hostile = [fx.req("~", placeholder, 3600), fx.req("a\u{0}b", "t", 3600)];
    let ordinary = fx.req("ordinary", "t", 3601);
    let all = [hostile[0].clone(), ordinary.clone(), hostile[1].clone()];
    fx.submit(&all).await;
    let out = fx.claim("w1", &all).await;
    // NotPending; a client reconciling an unknown outcome may report the
    // member as gone, never as claimed.
    for i in [0, 2] {
        assert!(!matches!(out[i], ClaimOutcome::Claimed { .. }), "{out:?}");
    }
    assert!(matches!(out[1], ClaimOutcome::Claimed { .. }), "{out:?}");
    let d = fx.depths().await;
    assert_eq!(
        (d.pending, d.claimed),
        (2, 1),
        "only the keyable one is claimed"
    );
    // The reclaimer finds nothing stranded once the lease is over.
    fx.reclaim_at(3600).await;
    let d = fx.depths().await;
    assert_eq!((d.pending, d.claimed), (3, 0));
}

super::checks! {
    clock_free:
        a_duplicate_of_an_answered_generation_naming_an_internal_key_as_its_payload_deletes_nothing,
        ids_and_tokens_with_odd_bytes_each_get_exactly_one_record,
        a_generation_whose_id_and_token_split_differently_is_not_suppressed;
    clocked:
        a_member_naming_an_internal_key_as_its_payload_reaches_the_delivery_limit_deleting_nothing,
        a_claim_of_a_generation_whose_id_or_token_holds_a_nul_claims_nothing;
}
