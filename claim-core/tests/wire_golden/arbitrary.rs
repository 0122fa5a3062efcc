//! Arbitrary bytes and hostile envelopes through the parse: it never panics, and what passes it cannot name another key or overflow an expiry.

use super::*;
use proptest::prelude::*;

/// A JSON value from the edges a hostile producer would try.
fn edge() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        Just(json!(null)),
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(i64::MAX)),
        Just(json!(u64::MAX)),
        Just(json!(1e300)),
        Just(json!(1.5)),
        Just(json!(wire::MAX_DEADLINE_SECS)),
        Just(json!(wire::MAX_DEADLINE_SECS + 1)),
        Just(json!(1_700_000_600)),
        Just(json!({})),
        Just(json!([])),
        Just(json!("request-sortedset")),
        "[a-z{}:~|\u{0}-]{0,12}".prop_map(serde_json::Value::from),
    ]
}

/// An envelope whose every field the parse reads is drawn from [`edge`].
fn envelope() -> impl Strategy<Value = String> {
    let names = [
        "request_token",
        "retry_count",
        "enqueue_seq",
        "payload_ref",
        "result_queue_name",
        "result_ttl_seconds",
        "result_routing_resolved",
    ];
    (
        proptest::collection::vec(edge(), names.len()),
        (edge(), edge(), edge(), edge()),
    )
        .prop_map(move |(internal, (id, deadline, created, payload))| {
            let internal: serde_json::Map<_, _> =
                names.iter().map(|n| n.to_string()).zip(internal).collect();
            json!({
                "internal": internal,
                "request_kind": "redis",
                "data": {"id": id, "deadline": deadline, "created": created, "payload": payload},
            })
            .to_string()
        })
}

proptest! {
    #[test]
    fn arbitrary_bytes_are_refused_or_parsed_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = wire::parse_member(&bytes);
        let _ = wire::member_deadline(&bytes);
    }

    #[test]
    fn what_a_hostile_envelope_parses_to_names_only_its_own_keys_and_numbers_in_range(member in envelope()) {
        let deadline = wire::member_deadline(member.as_bytes());
        let stored = claim_core::Member::from(member.as_str());
        let _ = stored.parse();
        prop_assert_eq!(stored.clone().deadline(), deadline, "a member remembers what its bytes hold");
        match wire::parse_member(member.as_bytes()) {
            Ok(p) => {
                prop_assert!((1..=wire::MAX_DEADLINE_SECS).contains(&p.deadline));
                prop_assert_eq!(deadline, Some(p.deadline), "the stores read the same deadline");
                if let Some(named) = &p.payload_ref {
                    prop_assert_eq!(named, &wire::payload_key(&p.id, &p.token));
                }
                prop_assert!(p.result_ttl_seconds.is_none_or(|t| t <= wire::MAX_RESULT_TTL_SECS));
                prop_assert!(!p.id.contains('\0') && !p.token.contains('\0'));
            }
            Err(MemberError::Invalid { .. } | MemberError::Unkeyable { .. } | MemberError::MissingId) => {}
            Err(e) => prop_assert!(false, "an object refused as not JSON: {e}"),
        }
    }
}
