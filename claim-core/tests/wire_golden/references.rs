//! Payload references, the enqueue sequence and result routing in `internal`: read, built and stamped as Go writes them.

use super::*;

/// A member as Go's producer writes it with payload keys on, after the
/// enqueue script stamped its sequence, with every routing field set.
const GO_BY_REFERENCE: &str = concat!(
    r#"{"internal":{"retry_count":2,"queue_id":"q1","request_token":"0123456789abcdef0123456789abcdef","#,
    r#""request_queue_name":"request-sortedset","result_queue_name":"results-a","#,
    r#""result_ttl_seconds":600,"result_routing_resolved":true,"enqueue_seq":3,"#,
    r#""payload_ref":"request-payload:req-7:0123456789abcdef0123456789abcdef","#,
    r#""labels":{"classification":"reserved"}},"request_kind":"redis","#,
    r#""data":{"id":"req-7","created":0,"deadline":1700000600,"payload":null}}"#
);

#[test]
fn a_go_member_by_reference_parses_every_routing_field_and_its_null_payload() {
    let p = parse(GO_BY_REFERENCE);
    assert_eq!(p.enqueue_seq, Some(3));
    assert_eq!(
        p.payload_ref.as_deref(),
        Some("request-payload:req-7:0123456789abcdef0123456789abcdef")
    );
    assert_eq!(p.result_ttl_seconds, Some(600));
    assert!(p.result_routing_resolved);
    assert!(p.payload_is_null());
    assert_eq!(p.payload.get(), "null");
    assert_eq!(p.score(), wire::queue_score(1_700_000_600, Some(3)));
    assert_eq!(p.score().0, 1_700_000_600.0 + 3.0 / 2_097_152.0);
}

#[test]
fn absent_empty_and_zero_routing_fields_read_as_unset_and_enqueued_at_ms_is_ignored() {
    let p = parse(&with_internal(
        r#"{"request_token":"t","payload_ref":"","result_ttl_seconds":0,"enqueued_at_ms":1700000000123}"#,
    ));
    assert_eq!(p.payload_ref, None);
    assert_eq!(p.result_ttl_seconds, None);
    assert!(!p.result_routing_resolved);
    assert_eq!(p.enqueue_seq, None);
    assert_eq!(p.score(), claim_core::Score(9.0));
    let zero = parse(&with_internal(r#"{"enqueue_seq":0}"#));
    assert_eq!(
        (zero.enqueue_seq, zero.score()),
        (Some(0), claim_core::Score(9.0))
    );
}

#[test]
fn a_payload_ref_naming_any_key_but_the_members_own_payload_key_is_invalid() {
    let own = parse(&with_internal(
        r#"{"request_token":"t","payload_ref":"request-payload:x:t"}"#,
    ));
    assert_eq!(own.payload_ref.as_deref(), Some("request-payload:x:t"));
    for named in [
        "request-sortedset",
        "retry-sortedset",
        "result-list",
        "request-sortedset:claimed",
        "request-payload:y:t",
        "request-payload:x:other",
        "request-payload:x:t ",
    ] {
        let internal = format!(r#"{{"request_token":"t","payload_ref":{named:?}}}"#);
        let (id, field, reason, _) = invalid(&with_internal(&internal));
        assert_eq!(
            (id.as_str(), field),
            ("x", "internal.payload_ref"),
            "{named}"
        );
        assert!(
            reason.contains("request-payload:x:t") && reason.contains("its own payload key"),
            "{named}: {reason}"
        );
    }
    let member = |named: &str| wire::lenient_payload_key("x", "t", Some(named));
    assert_eq!(
        member("request-payload:x:t").as_deref(),
        Some("request-payload:x:t")
    );
    assert_eq!(member("request-sortedset"), None);
}

#[test]
fn unusable_routing_fields_are_invalid_and_keep_the_id() {
    let cases = [
        (
            r#"{"result_ttl_seconds":-1}"#,
            "internal.result_ttl_seconds",
            "expected a non-negative integer number of seconds, at most 315360000 (ten years), got -1",
        ),
        (
            r#"{"result_ttl_seconds":315360001}"#,
            "internal.result_ttl_seconds",
            "expected a non-negative integer number of seconds, at most 315360000 (ten years), got 315360001",
        ),
        (
            r#"{"enqueue_seq":"3"}"#,
            "internal.enqueue_seq",
            r#"expected an integer, got "3""#,
        ),
        (
            r#"{"result_routing_resolved":1}"#,
            "internal.result_routing_resolved",
            "expected a boolean, got 1",
        ),
        (
            r#"{"payload_ref":7}"#,
            "internal.payload_ref",
            "expected a string, got 7",
        ),
    ];
    for (internal, field, reason) in cases {
        let (id, f, got, _) = invalid(&with_internal(internal));
        assert_eq!(
            (id.as_str(), f, got.as_str()),
            ("x", field, reason),
            "{internal}"
        );
    }
}

#[test]
fn an_id_or_token_holding_a_nul_byte_cannot_be_keyed_and_is_not_invalid() {
    let bad_id = r#"{"internal":{"request_token":"t"},"request_kind":"redis","data":{"id":"a\u0000b","deadline":9,"payload":{}}}"#;
    let e = error(bad_id);
    assert_eq!(
        e,
        MemberError::Unkeyable {
            id: "a\0b".into(),
            field: "data.id"
        }
    );
    assert_eq!(e.request_id(), Some("a\0b"));
    assert!(e.to_string().contains("NUL byte"), "{e}");
    let bad_token = with_internal(r#"{"request_token":"t\u0000u"}"#);
    assert_eq!(
        error(&bad_token),
        MemberError::Unkeyable {
            id: "x".into(),
            field: "internal.request_token"
        }
    );
}

#[test]
fn the_envelope_builder_writes_a_member_by_reference_in_go_field_order() {
    let mut e = Envelope::new(
        "req-7",
        "0123456789abcdef0123456789abcdef",
        1_700_000_600,
        json!({"prompt": "hi"}),
    );
    e.internal.retry_count = 2;
    e.internal.queue_id = "q1".into();
    e.internal.result_queue_name = "results-a".into();
    e.internal.result_ttl_seconds = 600;
    e.internal.result_routing_resolved = true;
    e.internal.enqueue_seq = 3;
    e.internal
        .labels
        .insert("classification".into(), "reserved".into());
    let (by_ref, payload) = e.by_reference();
    assert_eq!(text(payload), r#"{"prompt":"hi"}"#);
    assert_eq!(text(by_ref.to_bytes()), GO_BY_REFERENCE);
}

#[test]
fn a_null_payload_by_reference_is_stored_empty() {
    let (e, payload) = Envelope::new("x", "t", 5, serde_json::Value::Null).by_reference();
    assert!(payload.is_empty());
    assert_eq!(e.internal.payload_ref, wire::payload_key("x", "t"));
    assert_eq!(wire::payload_key("x", "t"), "request-payload:x:t");
    assert_eq!(wire::seq_key("q", 5), "request-seq:q:5");
}

#[test]
fn stamping_a_sequence_into_built_bytes_gives_the_bytes_go_builds_with_it() {
    let mut e = Envelope::new("req-7", "tok", 1_700_000_600, json!({"a": 1}));
    e.internal.transport_correlation_id = "corr".into();
    e.internal.labels.insert("k".into(), "v".into());
    let (mut e, _) = e.by_reference();
    let template = wire::seq_template(&e.to_bytes()).expect("a member");
    e.internal.enqueue_seq = 1_234_567;
    assert_eq!(text(template.stamp(1_234_567)), text(e.to_bytes()));
}

/// A member with `internal` replaced; id `x`, deadline 9.
fn with_internal(internal: &str) -> String {
    format!(
        r#"{{"internal":{internal},"request_kind":"redis","data":{{"id":"x","deadline":9,"payload":{{}}}}}}"#
    )
}

#[test]
fn an_envelope_becomes_a_submission_inline_or_by_reference() {
    let e = Envelope::new("id-1", "tok", 1_700_000_600, json!({"p": 1}));
    let inline = e.submission();
    assert_eq!(inline.member.as_bytes(), e.to_bytes());
    assert_eq!(
        inline.generation,
        claim_core::Generation::new("id-1", "tok")
    );
    assert_eq!((inline.deadline, inline.payload), (1_700_000_600, None));
    let apart = e.clone().submission_by_reference();
    assert_eq!(apart.member.as_bytes(), e.by_reference().0.to_bytes());
    assert_eq!(apart.payload, Some(claim_core::Payload::from(r#"{"p":1}"#)));
    assert_eq!(apart.payload_key(), "request-payload:id-1:tok");
}
