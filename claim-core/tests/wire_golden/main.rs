//! Golden tests of the wire format against the bytes the Go llm-d-async code writes.
//!
//! One module per part of `claim_core::wire`: reading members, stamping
//! them for a retry, result records, building members as the Go producer
//! does; `arbitrary` feeds the parse arbitrary and hostile bytes. The Go fixtures and helpers they share are here.

mod arbitrary;
mod member;
mod producer;
mod references;
mod result;
mod retry;

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

/// Each `(data, reason)`: a member with that data object is invalid,
/// names request `x` and `field`, and gives `reason`.
fn assert_data_field_invalid(field: &str, cases: &[(String, String)]) {
    for (data, reason) in cases {
        let (id, f, got, _) = invalid(&with_data(data));
        assert_eq!(
            (id.as_str(), f, got.as_str()),
            ("x", field, reason.as_str()),
            "{data}"
        );
    }
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
