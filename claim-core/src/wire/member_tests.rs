//! The member parser on hostile shapes: reading a member in one pass decides it as reading it object by object does, and each doubtful shape is decided with the words of the latter.

use super::entries::read;
use super::member::{Envelope, in_two_passes, member, parse_member};
use super::member_error::MemberError;
use proptest::prelude::*;
use std::marker::PhantomData;

/// A value as a hostile producer might write it, as JSON text.
fn edge() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("null"),
        Just("0"),
        Just("-0"),
        Just("1"),
        Just("-1"),
        Just("1.5"),
        Just("1e3"),
        Just("1700000600"),
        Just("253402300800"),
        Just("18446744073709551616"),
        Just("true"),
        Just(r#""""#),
        Just(r#""r1""#),
        Just(r#""tok""#),
        Just(r#""a\u0000b""#),
        Just(r#""caf\u00e9""#),
        Just(r#""redis""#),
        Just(r#""plain""#),
        Just(r#""request-payload:r1:tok""#),
        Just("{}"),
        Just(r#"{"k":"v","k":"w"}"#),
        Just(r#"{"k":1}"#),
        Just("[]"),
        Just(r#"["a"]"#),
        Just(r#"{"\ud800":1}"#),
        Just(r#"{"k":1,}"#),
        Just("{\"k\u{1}\":1}"),
    ]
    .prop_map(str::to_owned)
}

/// `"key":value` with a value of the field's own type most of the time
/// and an edge now and then; absent (an empty string) a third of the time.
fn entry(key: &'static str, good: &'static [&'static str]) -> BoxedStrategy<String> {
    let value =
        prop_oneof![12 => proptest::sample::select(good).prop_map(str::to_owned), 1 => edge()];
    prop_oneof![
        2 => value.prop_map(move |v| format!("\"{key}\":{v}")),
        1 => Just(String::new()),
    ]
    .boxed()
}

/// An object of `entries` in a shuffled order, with some of them
/// repeated (duplicate keys), or, now and then, not an object at all.
fn object(entries: Vec<BoxedStrategy<String>>) -> impl Strategy<Value = String> {
    let whole = (entries, proptest::collection::vec(0usize..16, 0..2))
        .prop_map(|(mut all, repeats)| {
            all.retain(|e| !e.is_empty());
            for r in repeats {
                if !all.is_empty() {
                    let again = all[r % all.len()].clone();
                    all.push(again);
                }
            }
            all
        })
        .prop_shuffle()
        .prop_map(|all| format!("{{{}}}", all.join(",")));
    prop_oneof![12 => whole, 1 => edge()]
}

fn member_text() -> impl Strategy<Value = String> {
    let text = &[r#""r1""#, r#""tok""#, r#""q""#, r#""""#];
    let map = &[r#"{"k":"v"}"#, "{}", "null"];
    let data = object(vec![
        entry("id", &[r#""r1""#, r#""a\u00e9""#])
            .prop_filter("id", |e| !e.is_empty())
            .boxed(),
        entry("deadline", &["1700000600", "1700000600.75", "1"]),
        entry("created", &["0", "1699999999", "-5"]),
        entry("payload", &[r#"{"model":"m"}"#, "null", "{}"]),
        entry("endpoint", text),
        entry("headers", map),
        entry("metadata", map),
        entry("other", &["[1,2]", r#"{"x":null}"#]),
    ]);
    let internal = object(vec![
        entry("request_token", text),
        entry("retry_count", &["0", "3", "4294967295"]),
        entry("enqueue_seq", &["0", "7", "-2"]),
        entry("payload_ref", &[r#""request-payload:r1:tok""#, r#""""#]),
        entry("labels", map),
        entry("result_ttl_seconds", &["0", "60", "315360000"]),
        entry("result_routing_resolved", &["true", "false"]),
        entry("queue_name", text),
    ]);
    (
        data,
        prop_oneof![3 => internal.prop_map(Some), 1 => Just(None)],
        prop_oneof![4 => Just(r#""redis""#.to_owned()), 1 => Just(r#""pubsub""#.to_owned()), 1 => edge()],
    )
        .prop_map(|(data, internal, kind)| match internal {
            Some(i) => format!(r#"{{"internal":{i},"request_kind":{kind},"data":{data}}}"#),
            None => format!(r#"{{"request_kind":{kind},"data":{data}}}"#),
        })
}

/// Reading `text` in one pass, when it can be, decides it as reading it
/// object by object does.
fn same(text: &str) {
    if let Ok(one_pass) = read(text, PhantomData::<Envelope>) {
        let two_passes = in_two_passes(text).expect("what one pass reads, two passes read");
        let (one, two) = (member(&one_pass), member(&two_passes));
        assert_eq!(format!("{one:?}"), format!("{two:?}"), "{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]
    #[test]
    fn whatever_a_member_holds_one_pass_decides_it_as_reading_it_object_by_object_does(
        text in member_text(),
    ) {
        same(&text);
    }
}

fn invalid(id: &str, field: &'static str, reason: &str) -> Result<String, MemberError> {
    Err(MemberError::Invalid {
        id: id.into(),
        field,
        reason: reason.into(),
    })
}

#[test]
fn every_doubtful_shape_is_decided_with_the_words_of_reading_it_object_by_object() {
    let when = "a positive Unix timestamp in seconds, at most 253402300799 (year 9999)";
    let not_json = |reason: &str| {
        Err(MemberError::NotJson {
            reason: reason.into(),
        })
    };
    let cases = [
        (
            r#"{"internal":{"request_token":"tok","request_queue_name":"q"},"request_kind":"redis","data":{"id":"r1","created":0,"deadline":1700000600,"payload":{"m":1}}}"#,
            Ok("r1".to_owned()),
        ),
        (
            r#"{"request_kind":"redis","data":{"\u0069d":"r1","deadline":1700000600.5,"payload":null}}"#,
            Ok("r1".to_owned()),
        ),
        (
            r#"{"request_kind":"redis","data":{"id":"r1","id":"r2","deadline":1,"payload":null}}"#,
            Ok("r2".to_owned()),
        ),
        (
            r#"{"request_kind":"redis","data":["r1",1700000600,0,null]}"#,
            Err(MemberError::MissingId),
        ),
        (
            r#"{"request_kind":"redis","data":{"id":"r1","deadline":1700000600}}"#,
            invalid(
                "r1",
                "data.payload",
                "missing; expected a JSON object or null",
            ),
        ),
        (
            r#"{"request_kind":"redis","data":{"id":"r1","deadline":-0,"payload":null}}"#,
            invalid("r1", "data.deadline", &format!("expected {when}, got -0")),
        ),
        (
            r#"{"request_kind":"redis","data":{"id":"r1","deadline":1,"payload":"text"}}"#,
            invalid(
                "r1",
                "data.payload",
                r#"expected a JSON object or null, got "text""#,
            ),
        ),
        (
            r#"{"request_kind":"redis","internal":{"payload_ref":"results"},"data":{"id":"r1","deadline":1,"payload":null}}"#,
            invalid(
                "r1",
                "internal.payload_ref",
                r#"names the key "results"; a member may reference only its own payload key "request-payload:r1:""#,
            ),
        ),
        (
            r#"{"request_kind":"redis","internal":[],"data":{"id":"r1","deadline":1,"payload":null}}"#,
            invalid("r1", "internal", "expected an object, got an array"),
        ),
        // A key no string can hold (a lone UTF-16 surrogate): in an earlier
        // `data` the last one replaces it is never read, in `internal` it
        // is the request's fault, in the last `data` the member is no JSON.
        (
            r#"{"request_kind":"redis","data":{"\ud800":1},"data":{"id":"x","deadline":9,"payload":{}}}"#,
            Ok("x".to_owned()),
        ),
        (
            r#"{"request_kind":"redis","internal":{"\ud800":1},"data":{"id":"x","deadline":9,"payload":{}}}"#,
            invalid("x", "internal", "expected an object, got an object"),
        ),
        (
            r#"{"request_kind":"redis","data":{"\ud800":1}}"#,
            not_json("expected an object, got an object"),
        ),
        (
            r#"{"request_kind":"redis","data":{"id":"x","deadline":9,"payload":{},}}"#,
            not_json("key must be a string at line 1 column 68"),
        ),
    ];
    for (text, outcome) in cases {
        same(text);
        assert_eq!(
            parse_member(text.as_bytes()).map(|p| p.id),
            outcome,
            "{text}"
        );
    }
}
