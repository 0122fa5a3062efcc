//! `Envelope`: members built the way the Go producer writes them, byte for byte.

use super::*;

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
