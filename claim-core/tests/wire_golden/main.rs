//! Golden tests of the wire format against the bytes the Go llm-d-async code writes.

use claim_core::wire::{
    self, Envelope, ErrorCode, MemberError, ParsedMember, RequestKind, ResultRecord,
};
use serde_json::json;

/// A member as Go's `RedisSortedSetProducer.SubmitRequest` enqueues a `RedisRequest`
/// with every optional field set (`json.Marshal`: struct order, sorted map keys).
const GO_MEMBER: &str = concat!(
    r#"{"internal":{"request_token":"9f86d081884c7d659a2feaa0c55ad015","#,
    r#""request_queue_name":"request-sortedset","result_queue_name":"result-list"},"#,
    r#""request_kind":"redis","data":{"id":"req-1","created":1700000000,"#,
    r#""deadline":1700000600,"payload":{"model":"m","prompt":"hi"},"#,
    r#""metadata":{"tenant":"alpha"},"headers":{"Authorization":"Bearer tok"},"#,
    r#""endpoint":"/v1/chat/completions","request_queue_name":"request-sortedset","#,
    r#""result_queue_name":"result-list"}}"#
);

/// A member from a producer that predates request tokens.
const NO_TOKEN: &str = r#"{"internal":{},"request_kind":"redis","data":{"id":"x","created":0,"deadline":1700000600,"payload":{}}}"#;

/// A member carrying fields this crate does not know, at every level.
const UNKNOWN_FIELDS: &str = concat!(
    r#"{"internal":{"request_token":"t","labels":{"classification":"reserved"},"#,
    r#""future_internal":{"deep":[1,{"x":null}]}},"request_kind":"redis","#,
    r#""data":{"id":"u","created":1,"deadline":1700000600,"#,
    r#""payload":{"n":123456789012345678901234567890,"f":1.50,"e":1E3,"s":"a<b"},"#,
    r#""future_data":{"k":[true,false]}},"trace":{"span":"abc"}}"#
);

fn parse(member: &str) -> ParsedMember {
    wire::parse_member(member.as_bytes()).expect("member parses")
}

fn error(member: &str) -> MemberError {
    wire::parse_member(member.as_bytes()).expect_err("member is rejected")
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("UTF-8")
}

/// A member with `data` replaced, for field-level error tests.
fn with_data(data: &str) -> String {
    format!(r#"{{"internal":{{"request_token":"t"}},"request_kind":"redis","data":{data}}}"#)
}

fn invalid(member: &str) -> (String, &'static str, String, String) {
    let e = error(member);
    let message = e.to_string();
    match e {
        MemberError::Invalid { id, field, reason } => (id, field, reason, message),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn go_producer_member_parses_into_every_field() {
    let p = parse(GO_MEMBER);
    assert_eq!(p.id, "req-1");
    assert_eq!(p.token, "9f86d081884c7d659a2feaa0c55ad015");
    assert_eq!(p.deadline, 1_700_000_600);
    assert_eq!(p.created, Some(1_700_000_000));
    assert_eq!(p.retry_count, 0);
    assert_eq!(p.request_queue_name.as_deref(), Some("request-sortedset"));
    assert_eq!(p.result_queue_name.as_deref(), Some("result-list"));
    assert_eq!(p.queue_id, None);
    assert_eq!(p.transport_correlation_id, None);
    assert!(p.labels.is_empty());
    assert_eq!(p.endpoint.as_deref(), Some("/v1/chat/completions"));
    assert_eq!(p.headers["Authorization"], "Bearer tok");
    assert_eq!(p.metadata["tenant"], "alpha");
    assert_eq!(p.payload.get(), r#"{"model":"m","prompt":"hi"}"#);
    assert_eq!(p.request_kind, RequestKind::Redis);
}

#[test]
fn envelope_builder_writes_the_go_producer_bytes() {
    let mut e = Envelope::new(
        "req-1",
        "9f86d081884c7d659a2feaa0c55ad015",
        1_700_000_600,
        json!({"prompt": "hi", "model": "m"}),
    );
    e.data.created = 1_700_000_000;
    e.data.metadata.insert("tenant".into(), "alpha".into());
    e.data
        .headers
        .insert("Authorization".into(), "Bearer tok".into());
    e.data.endpoint = "/v1/chat/completions".into();
    e.data.request_queue_name = wire::DEFAULT_QUEUE.into();
    e.data.result_queue_name = wire::DEFAULT_RESULT_LIST.into();
    assert_eq!(text(e.to_bytes()), GO_MEMBER);
}

#[test]
fn envelope_builder_omits_empty_fields_like_go_omitempty() {
    let e = Envelope::new("x", "", 1_700_000_600, json!({}));
    let expected = concat!(
        r#"{"internal":{"request_queue_name":"request-sortedset","result_queue_name":"result-list"},"#,
        r#""request_kind":"redis","data":{"id":"x","created":0,"deadline":1700000600,"payload":{}}}"#
    );
    assert_eq!(text(e.to_bytes()), expected);
}

#[test]
fn envelope_builder_escapes_html_characters_like_go() {
    let mut e = Envelope::new("x", "t", 1, json!({"b": "<a&b>\u{2028}", "a": 1}));
    e.internal = Default::default();
    e.request_kind = RequestKind::Plain;
    let expected = concat!(
        r#"{"internal":{},"request_kind":"plain","data":{"id":"x","created":0,"deadline":1,"#,
        r#""payload":{"a":1,"b":"\u003ca\u0026b\u003e\u2028"}}}"#
    );
    assert_eq!(text(e.to_bytes()), expected);
}

#[test]
fn member_without_token_parses_with_empty_token() {
    let p = parse(NO_TOKEN);
    assert_eq!(p.token, "");
    assert_eq!(p.created, None, "Go writes created 0 when unset");
    assert_eq!(p.retry_count, 0);
    assert_eq!(p.request_queue_name, None);
    assert_eq!(p.result_queue_name, None);
}

#[test]
fn member_without_internal_or_with_null_internal_parses_with_defaults() {
    for member in [
        r#"{"request_kind":"plain","data":{"id":"x","deadline":5,"payload":{}}}"#,
        r#"{"internal":null,"request_kind":"pubsub","data":{"id":"x","deadline":5,"payload":{}}}"#,
    ] {
        let p = parse(member);
        assert_eq!((p.token.as_str(), p.retry_count, p.deadline), ("", 0, 5));
    }
}

#[test]
fn member_with_unknown_fields_at_every_level_parses() {
    let p = parse(UNKNOWN_FIELDS);
    assert_eq!(p.id, "u");
    assert_eq!(p.token, "t");
    assert_eq!(p.labels["classification"], "reserved");
    assert_eq!(
        p.payload.get(),
        r#"{"n":123456789012345678901234567890,"f":1.50,"e":1E3,"s":"a<b"}"#
    );
}

#[test]
fn member_internal_fields_are_all_read() {
    let member = concat!(
        r#"{"internal":{"retry_count":3,"queue_id":"q1","request_token":"t","#,
        r#""request_queue_name":"rq","result_queue_name":"res","transport_correlation_id":"c","#,
        r#""labels":{"tier":"batch"}},"request_kind":"redis","data":{"id":"x","deadline":9,"payload":{}}}"#
    );
    let p = parse(member);
    assert_eq!(p.retry_count, 3);
    assert_eq!(p.queue_id.as_deref(), Some("q1"));
    assert_eq!(p.request_queue_name.as_deref(), Some("rq"));
    assert_eq!(p.result_queue_name.as_deref(), Some("res"));
    assert_eq!(p.transport_correlation_id.as_deref(), Some("c"));
    assert_eq!(p.labels["tier"], "batch");
}

#[test]
fn queue_names_come_from_internal_only_as_in_the_go_processor() {
    let p = parse(&with_data(
        r#"{"id":"x","deadline":9,"payload":{},"request_queue_name":"d","result_queue_name":"d"}"#,
    ));
    assert_eq!((p.request_queue_name, p.result_queue_name), (None, None));
}

#[test]
fn fractional_deadline_is_floored_to_whole_seconds() {
    assert_eq!(
        parse(&with_data(
            r#"{"id":"x","deadline":1700000600.9,"payload":{}}"#
        ))
        .deadline,
        1_700_000_600
    );
    assert_eq!(
        parse(&with_data(r#"{"id":"x","deadline":1.7e9,"payload":{}}"#)).deadline,
        1_700_000_000
    );
}

#[test]
fn duplicate_keys_take_the_last_value_as_in_go() {
    let p = parse(&with_data(
        r#"{"id":"a","id":"b","deadline":1,"deadline":2,"payload":{}}"#,
    ));
    assert_eq!((p.id.as_str(), p.deadline), ("b", 2));
}

#[test]
fn text_that_is_not_json_is_not_json() {
    let e = error("not json");
    assert!(matches!(e, MemberError::NotJson { .. }));
    assert_eq!(
        e.to_string(),
        "member is not a JSON object: expected ident at line 1 column 2"
    );
    assert_eq!(e.request_id(), None);
}

#[test]
fn json_that_is_not_an_object_is_not_json() {
    let e = error("[1,2]");
    assert_eq!(
        e.to_string(),
        "member is not a JSON object: expected an object, got an array"
    );
    assert!(matches!(
        error(r#"{"data":{"id":"x"}} trailing"#),
        MemberError::NotJson { .. }
    ));
}

#[test]
fn bytes_that_are_not_utf8_are_not_json() {
    let e = wire::parse_member(b"{\"data\":\"\xff\"}").expect_err("rejected");
    assert!(
        e.to_string()
            .starts_with("member is not a JSON object: invalid utf-8"),
        "{e}"
    );
}

#[test]
fn member_without_a_usable_id_is_missing_id() {
    for member in [
        r#"{"internal":{},"request_kind":"redis"}"#,
        r#"{"request_kind":"redis","data":"req-1"}"#,
        r#"{"request_kind":"redis","data":null}"#,
        &with_data(r#"{"deadline":9,"payload":{}}"#),
        &with_data(r#"{"id":"","deadline":9,"payload":{}}"#),
        &with_data(r#"{"id":null,"deadline":9,"payload":{}}"#),
        &with_data(r#"{"id":42,"deadline":9,"payload":{}}"#),
    ] {
        let e = error(member);
        assert_eq!(e, MemberError::MissingId, "{member}");
        assert_eq!(
            e.to_string(),
            "member has no request id: expected data.id to be a non-empty string"
        );
        assert_eq!(e.request_id(), None);
    }
}

#[test]
fn member_with_a_bad_deadline_is_invalid_and_names_the_field() {
    let cases = [
        (
            r#"{"id":"x","payload":{}}"#,
            "missing; expected a positive Unix timestamp in seconds",
        ),
        (
            r#"{"id":"x","deadline":null,"payload":{}}"#,
            "missing; expected a positive Unix timestamp in seconds",
        ),
        (
            r#"{"id":"x","deadline":"soon","payload":{}}"#,
            r#"expected a positive Unix timestamp in seconds, got "soon""#,
        ),
        (
            r#"{"id":"x","deadline":0,"payload":{}}"#,
            "expected a positive Unix timestamp in seconds, got 0",
        ),
        (
            r#"{"id":"x","deadline":-5,"payload":{}}"#,
            "expected a positive Unix timestamp in seconds, got -5",
        ),
        (
            r#"{"id":"x","deadline":0.5,"payload":{}}"#,
            "expected a positive Unix timestamp in seconds, got 0.5",
        ),
        (
            r#"{"id":"x","deadline":1e300,"payload":{}}"#,
            "expected a positive Unix timestamp in seconds, got 1e300",
        ),
    ];
    for (data, reason) in cases {
        let (id, field, got, _) = invalid(&with_data(data));
        assert_eq!(
            (id.as_str(), field, got.as_str()),
            ("x", "data.deadline", reason),
            "{data}"
        );
    }
    let (_, _, _, message) = invalid(&with_data(r#"{"id":"x","payload":{}}"#));
    assert_eq!(
        message,
        r#"request "x": invalid data.deadline: missing; expected a positive Unix timestamp in seconds"#
    );
}

#[test]
fn member_whose_payload_is_not_an_object_is_invalid() {
    let cases = [
        (
            r#"{"id":"x","deadline":9}"#,
            "missing; expected a JSON object",
        ),
        (
            r#"{"id":"x","deadline":9,"payload":null}"#,
            "missing; expected a JSON object",
        ),
        (
            r#"{"id":"x","deadline":9,"payload":[1]}"#,
            "expected a JSON object, got an array",
        ),
        (
            r#"{"id":"x","deadline":9,"payload":"{}"}"#,
            r#"expected a JSON object, got "{}""#,
        ),
    ];
    for (data, reason) in cases {
        let (id, field, got, _) = invalid(&with_data(data));
        assert_eq!(
            (id.as_str(), field, got.as_str()),
            ("x", "data.payload", reason),
            "{data}"
        );
    }
}

#[test]
fn member_with_a_bad_envelope_field_is_invalid_and_keeps_its_id() {
    let data = r#"{"id":"x","deadline":9,"payload":{}}"#;
    let cases = [
        (
            format!(r#"{{"data":{data}}}"#),
            "request_kind",
            r#"missing; expected "plain", "redis" or "pubsub""#,
        ),
        (
            format!(r#"{{"request_kind":"alien","data":{data}}}"#),
            "request_kind",
            r#"expected "plain", "redis" or "pubsub", got "alien""#,
        ),
        (
            format!(r#"{{"internal":[],"request_kind":"redis","data":{data}}}"#),
            "internal",
            "expected an object, got an array",
        ),
        (
            format!(r#"{{"internal":{{"retry_count":-1}},"request_kind":"redis","data":{data}}}"#),
            "internal.retry_count",
            "expected a non-negative integer, got -1",
        ),
        (
            format!(r#"{{"internal":{{"retry_count":"2"}},"request_kind":"redis","data":{data}}}"#),
            "internal.retry_count",
            r#"expected a non-negative integer, got "2""#,
        ),
        (
            format!(r#"{{"internal":{{"request_token":7}},"request_kind":"redis","data":{data}}}"#),
            "internal.request_token",
            "expected a string, got 7",
        ),
        (
            format!(
                r#"{{"internal":{{"labels":{{"a":1}}}},"request_kind":"redis","data":{data}}}"#
            ),
            "internal.labels",
            "expected an object of string values, got 1",
        ),
    ];
    for (member, field, reason) in cases {
        let e = error(&member);
        assert_eq!(e.request_id(), Some("x"), "{member}");
        assert_eq!(
            e,
            MemberError::Invalid {
                id: "x".into(),
                field,
                reason: reason.into()
            },
            "{member}"
        );
    }
}

#[test]
fn member_with_bad_optional_data_fields_is_invalid() {
    let cases = [
        (
            r#"{"id":"x","deadline":9,"payload":{},"created":"now"}"#,
            "data.created",
            r#"expected Unix seconds, got "now""#,
        ),
        (
            r#"{"id":"x","deadline":9,"payload":{},"headers":["a"]}"#,
            "data.headers",
            "expected an object of string values, got an array",
        ),
        (
            r#"{"id":"x","deadline":9,"payload":{},"headers":{"a":"b","n":true}}"#,
            "data.headers",
            "expected an object of string values, got true",
        ),
        (
            r#"{"id":"x","deadline":9,"payload":{},"metadata":{"a":null}}"#,
            "data.metadata",
            "expected an object of string values, got null",
        ),
        (
            r#"{"id":"x","deadline":9,"payload":{},"endpoint":{}}"#,
            "data.endpoint",
            "expected a string, got an object",
        ),
    ];
    for (data, field, reason) in cases {
        let (_, f, got, _) = invalid(&with_data(data));
        assert_eq!((f, got.as_str()), (field, reason), "{data}");
    }
}

#[test]
fn long_values_are_shortened_in_error_messages() {
    let long = "y".repeat(100);
    let (_, _, reason, _) = invalid(&with_data(&format!(
        r#"{{"id":"x","deadline":"{long}","payload":{{}}}}"#
    )));
    assert_eq!(
        reason,
        format!(
            "expected a positive Unix timestamp in seconds, got \"{}…",
            "y".repeat(39)
        )
    );
}

#[test]
fn stamp_retry_of_a_go_member_writes_what_go_would() {
    let stamped = wire::stamp_retry(GO_MEMBER.as_bytes(), "queue-b").expect("stamps");
    let expected = GO_MEMBER.replace(
        r#"{"internal":{"request_token":"9f86d081884c7d659a2feaa0c55ad015","request_queue_name":"request-sortedset","#,
        r#"{"internal":{"retry_count":1,"request_token":"9f86d081884c7d659a2feaa0c55ad015","request_queue_name":"queue-b","#,
    );
    assert_ne!(expected, GO_MEMBER);
    assert_eq!(text(stamped), expected);
}

#[test]
fn stamp_retry_increments_an_existing_retry_count() {
    let once = wire::stamp_retry(GO_MEMBER.as_bytes(), "q").expect("stamps");
    let twice = wire::stamp_retry(&once, "q").expect("stamps");
    let p = wire::parse_member(&twice).expect("parses");
    assert_eq!(
        (p.retry_count, p.request_queue_name.as_deref()),
        (2, Some("q"))
    );
    assert!(text(twice).starts_with(r#"{"internal":{"retry_count":2,"request_token""#));
}

#[test]
fn stamp_retry_keeps_unknown_fields_and_exact_values_at_every_depth() {
    let stamped = text(wire::stamp_retry(UNKNOWN_FIELDS.as_bytes(), "q<1>").expect("stamps"));
    let expected = concat!(
        r#"{"internal":{"retry_count":1,"request_token":"t","request_queue_name":"q\u003c1\u003e","#,
        r#""labels":{"classification":"reserved"},"future_internal":{"deep":[1,{"x":null}]}},"#,
        r#""request_kind":"redis","data":{"id":"u","created":1,"deadline":1700000600,"#,
        r#""payload":{"n":123456789012345678901234567890,"f":1.50,"e":1E3,"s":"a<b"},"#,
        r#""future_data":{"k":[true,false]}},"trace":{"span":"abc"}}"#
    );
    assert_eq!(stamped, expected);
    assert_eq!(parse(&stamped).request_queue_name.as_deref(), Some("q<1>"));
}

#[test]
fn stamp_retry_creates_internal_when_it_is_absent_or_null() {
    for member in [
        r#"{"request_kind":"plain","data":{"id":"x","deadline":5,"payload":{}}}"#,
        r#"{"request_kind":"plain","internal":null,"data":{"id":"x","deadline":5,"payload":{}}}"#,
    ] {
        let stamped = text(wire::stamp_retry(member.as_bytes(), "q").expect("stamps"));
        assert!(
            stamped.contains(r#""internal":{"retry_count":1,"request_queue_name":"q"}"#),
            "{stamped}"
        );
        assert!(
            stamped.ends_with(r#""data":{"id":"x","deadline":5,"payload":{}}}"#),
            "{stamped}"
        );
    }
    let absent = wire::stamp_retry(
        br#"{"request_kind":"plain","data":{"id":"x","deadline":5,"payload":{}}}"#,
        "q",
    );
    assert!(text(absent.expect("stamps")).starts_with(r#"{"internal":{"#));
}

#[test]
fn stamp_retry_rejects_what_parse_member_rejects() {
    assert!(matches!(
        wire::stamp_retry(b"nope", "q"),
        Err(MemberError::NotJson { .. })
    ));
    assert_eq!(
        wire::stamp_retry(br#"{"data":{}}"#, "q"),
        Err(MemberError::MissingId)
    );
    let bad = with_data(r#"{"id":"x","payload":{}}"#);
    assert_eq!(
        wire::stamp_retry(bad.as_bytes(), "q")
            .expect_err("invalid")
            .request_id(),
        Some("x")
    );
}

#[test]
fn success_record_matches_go_bytes() {
    let r = ResultRecord::success("req-1", 200, r#"{"choices":[{"text":"<ok>"}]}"#);
    assert_eq!(
        text(r.to_json_bytes()),
        r#"{"id":"req-1","status_code":200,"payload":"{\"choices\":[{\"text\":\"\u003cok\u003e\"}]}"}"#
    );
    let r = ResultRecord::success("req-2", 503, "");
    assert_eq!(
        text(r.to_json_bytes()),
        r#"{"id":"req-2","status_code":503,"payload":""}"#
    );
}

#[test]
fn error_records_match_go_bytes_for_every_code() {
    for code in ErrorCode::ALL {
        let r = ResultRecord::error("req-1", code, "deadline exceeded");
        let expected = format!(
            r#"{{"id":"req-1","payload":"{{\"error\":\"deadline exceeded\"}}","error_code":"{code}","error_message":"deadline exceeded"}}"#
        );
        assert_eq!(text(r.to_json_bytes()), expected);
    }
}

#[test]
fn error_record_escapes_its_message_twice_like_go() {
    let r = ResultRecord::error("r", ErrorCode::InferenceError, "a<b \"q\"");
    assert_eq!(r.payload, r#"{"error":"a\u003cb \"q\""}"#);
    assert_eq!(
        text(r.to_json_bytes()),
        r#"{"id":"r","payload":"{\"error\":\"a\\u003cb \\\"q\\\"\"}","error_code":"INFERENCE_ERROR","error_message":"a\u003cb \"q\""}"#
    );
}

#[test]
fn error_record_with_empty_message_omits_error_message() {
    let r = ResultRecord::error("r", ErrorCode::Cancelled, "");
    assert_eq!(
        text(r.to_json_bytes()),
        r#"{"id":"r","payload":"{\"error\":\"\"}","error_code":"CANCELLED"}"#
    );
}

#[test]
fn result_records_round_trip_through_from_json() {
    for r in [
        ResultRecord::success("a", 200, "{}"),
        ResultRecord::error("b", ErrorCode::DeliveryLimit, "lease expired 10 times"),
    ] {
        assert_eq!(
            ResultRecord::from_json(&r.to_json_bytes()).expect("parses"),
            r
        );
    }
}

#[test]
fn from_json_reads_go_zero_values_as_absent() {
    let r = ResultRecord::from_json(
        br#"{"id":"x","status_code":0,"error_code":"","error_message":"","extra":1}"#,
    )
    .expect("parses");
    assert_eq!(r, ResultRecord::success("x", 0, ""));
    assert_eq!(text(r.to_json_bytes()), r#"{"id":"x","payload":""}"#);
}

#[test]
fn from_json_rejects_records_go_consumers_reject_and_unknown_codes() {
    assert!(ResultRecord::from_json(br#"{"payload":"p"}"#).is_err());
    assert!(ResultRecord::from_json(br#"{"id":"","payload":"p"}"#).is_err());
    let e = ResultRecord::from_json(br#"{"id":"x","error_code":"NOPE"}"#).expect_err("unknown");
    assert!(
        e.to_string()
            .starts_with(r#"unknown error code "NOPE": expected one of DEADLINE_EXCEEDED"#),
        "{e}"
    );
}

#[test]
fn error_codes_use_the_go_wire_names() {
    let names = [
        "DEADLINE_EXCEEDED",
        "CANCELLED",
        "GATE_DROPPED",
        "GATE_ERROR",
        "INFERENCE_ERROR",
        "INVALID_REQUEST",
        "DELIVERY_LIMIT",
    ];
    for (code, name) in ErrorCode::ALL.into_iter().zip(names) {
        assert_eq!(code.as_str(), name);
        assert_eq!(code.to_string(), name);
        assert_eq!(name.parse::<ErrorCode>(), Ok(code));
        assert_eq!(
            serde_json::to_string(&code).expect("serializes"),
            format!("\"{name}\"")
        );
    }
    assert!("deadline_exceeded".parse::<ErrorCode>().is_err());
}

#[test]
fn key_names_and_defaults_match_go() {
    assert_eq!(wire::active_key("req-1"), "request-active:req-1");
    assert_eq!(wire::cancel_key("req-1"), "request-cancel:req-1");
    assert_eq!(wire::DEFAULT_QUEUE, "request-sortedset");
    assert_eq!(wire::DEFAULT_RESULT_LIST, "result-list");
    assert_eq!(wire::DEFAULT_RETRY_SET, "retry-sortedset");
    assert_eq!(wire::CANCEL_MARKER_TTL_SECS, 604_800);
    assert_eq!(RequestKind::PubSub.as_str(), "pubsub");
}

#[test]
fn pretty_printed_member_parses_and_stamps() {
    let member = "{\n  \"internal\" : { \"request_token\" : \"t\" },\n  \"request_kind\" : \"redis\",\n  \"data\" : { \"id\" : \"x\", \"deadline\" : 9, \"payload\" : { \"a\" : [ 1 ] } }\n}\n";
    let p = parse(member);
    assert_eq!(
        (p.id.as_str(), p.token.as_str(), p.payload.get()),
        ("x", "t", "{ \"a\" : [ 1 ] }")
    );
    let stamped = text(wire::stamp_retry(member.as_bytes(), "q").expect("stamps"));
    assert_eq!(
        stamped,
        r#"{"internal":{"retry_count":1,"request_token":"t","request_queue_name":"q"},"request_kind":"redis","data":{ "id" : "x", "deadline" : 9, "payload" : { "a" : [ 1 ] } }}"#
    );
}
