//! `stamp_retry`: the retry count and queue rewritten, every other byte kept.

use super::*;

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
