//! The one-pass member reader against the full parser: whatever the fast path takes, it reads as the full parser does, and every doubtful shape is left to the full parser.

use super::member::parse_text;
use super::one_pass::parse;
use proptest::prelude::*;

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

fn member() -> impl Strategy<Value = String> {
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

fn same(text: &str) {
    if let Some(fast) = parse(text) {
        let full = parse_text(text).expect("what the one-pass reader takes, the full parser takes");
        assert_eq!(format!("{fast:?}"), format!("{full:?}"), "{text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]
    #[test]
    fn whatever_the_one_pass_reader_takes_it_reads_as_the_full_parser_does(text in member()) {
        same(&text);
    }
}

#[test]
fn the_common_shape_is_read_in_one_pass_and_every_doubtful_one_is_left_to_the_full_parser() {
    let go = r#"{"internal":{"request_token":"tok","request_queue_name":"q"},"request_kind":"redis","data":{"id":"r1","created":0,"deadline":1700000600,"payload":{"m":1}}}"#;
    let escaped_key = r#"{"request_kind":"redis","data":{"\u0069d":"r1","deadline":1700000600.5,"payload":null}}"#;
    for taken in [go, escaped_key] {
        assert!(parse(taken).is_some(), "{taken}");
        same(taken);
    }
    for left in [
        r#"{"request_kind":"redis","data":{"id":"r1","id":"r2","deadline":1,"payload":null}}"#,
        r#"{"request_kind":"redis","data":["r1",1700000600,0,null]}"#,
        r#"{"request_kind":"redis","data":{"id":"r1","deadline":1700000600}}"#,
        r#"{"request_kind":"redis","data":{"id":"r1","deadline":-0,"payload":null}}"#,
        r#"{"request_kind":"redis","data":{"id":"r1","deadline":1,"payload":"text"}}"#,
        r#"{"request_kind":"redis","internal":{"payload_ref":"results"},"data":{"id":"r1","deadline":1,"payload":null}}"#,
        r#"{"request_kind":"redis","internal":[],"data":{"id":"r1","deadline":1,"payload":null}}"#,
    ] {
        assert!(parse(left).is_none(), "{left}");
    }
}
