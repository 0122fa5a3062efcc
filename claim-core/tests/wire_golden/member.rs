//! `parse_member`: what is read from a member, and how an unusable one is refused.

use super::*;

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
    let deadline = |value: &str| format!(r#"{{"id":"x","deadline":{value},"payload":{{}}}}"#);
    let missing =
        "missing; expected a positive Unix timestamp in seconds, at most 253402300799 (year 9999)";
    let got = |value: &str| {
        format!(
            "expected a positive Unix timestamp in seconds, at most 253402300799 (year 9999), got {value}"
        )
    };
    assert_data_field_invalid(
        "data.deadline",
        &[
            (r#"{"id":"x","payload":{}}"#.to_owned(), missing.to_owned()),
            (deadline("null"), missing.to_owned()),
            (deadline(r#""soon""#), got(r#""soon""#)),
            (deadline("0"), got("0")),
            (deadline("-5"), got("-5")),
            (deadline("0.5"), got("0.5")),
            (deadline("1e300"), got("1e300")),
            (deadline("253402300800"), got("253402300800")),
            (deadline("9223372036854775807"), got("9223372036854775807")),
        ],
    );
    let (_, _, _, message) = invalid(&with_data(r#"{"id":"x","payload":{}}"#));
    assert_eq!(
        message,
        r#"request "x": invalid data.deadline: missing; expected a positive Unix timestamp in seconds, at most 253402300799 (year 9999)"#
    );
}

#[test]
fn member_whose_payload_is_neither_an_object_nor_null_is_invalid() {
    let payload = |value: &str| format!(r#"{{"id":"x","deadline":9,"payload":{value}}}"#);
    let missing = "missing; expected a JSON object or null";
    let cases = [
        (r#"{"id":"x","deadline":9}"#.to_owned(), missing),
        (
            payload("[1]"),
            "expected a JSON object or null, got an array",
        ),
        (
            payload(r#""{}""#),
            r#"expected a JSON object or null, got "{}""#,
        ),
    ];
    assert_data_field_invalid("data.payload", &cases.map(|(d, r)| (d, r.to_owned())));
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
            r#"expected Unix seconds between -253402300799 and 253402300799, got "now""#,
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
fn the_latest_deadline_parses_and_a_created_time_beyond_the_range_is_invalid() {
    let p = parse(&with_data(
        r#"{"id":"x","deadline":253402300799,"payload":{}}"#,
    ));
    assert_eq!(p.deadline, claim_core::wire::MAX_DEADLINE_SECS);
    let (_, f, _, _) = invalid(&with_data(
        r#"{"id":"x","deadline":9,"payload":{},"created":-9223372036854775808}"#,
    ));
    assert_eq!(f, "data.created");
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
            "expected a positive Unix timestamp in seconds, at most 253402300799 (year 9999), got \"{}…",
            "y".repeat(39)
        )
    );
}
