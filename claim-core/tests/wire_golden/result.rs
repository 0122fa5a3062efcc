//! `ResultRecord` and `ErrorCode`: the bytes Go writes, and reading records as a Go consumer does.

use super::*;

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
        ResultRecord::success("c", 200, "{}").with_token("9f86d081884c7d659a2feaa0c55ad015"),
        ResultRecord::error("d", ErrorCode::PayloadUnavailable, "gone").with_token("t"),
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
        "PAYLOAD_UNAVAILABLE",
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
fn records_carry_the_request_token_last_as_go_writes_it() {
    let token = "9f86d081884c7d659a2feaa0c55ad015";
    let r = ResultRecord::success("req-1", 200, "{}").with_token(token);
    assert_eq!(
        text(r.to_json_bytes()),
        format!(r#"{{"id":"req-1","status_code":200,"payload":"{{}}","request_token":"{token}"}}"#)
    );
    let r = ResultRecord::error("req-1", ErrorCode::Cancelled, "cancelled").with_token(token);
    assert_eq!(
        text(r.to_json_bytes()),
        format!(
            r#"{{"id":"req-1","payload":"{{\"error\":\"cancelled\"}}","error_code":"CANCELLED","error_message":"cancelled","request_token":"{token}"}}"#
        )
    );
}

#[test]
fn a_request_without_a_token_gets_a_record_without_the_field() {
    let r = ResultRecord::success("old", 200, "{}").with_token("");
    assert_eq!(r.request_token, None);
    assert_eq!(
        text(r.to_json_bytes()),
        r#"{"id":"old","status_code":200,"payload":"{}"}"#
    );
}

#[test]
fn a_missing_payload_record_matches_go_bytes() {
    let r = ResultRecord::error(
        "p",
        ErrorCode::PayloadUnavailable,
        wire::PAYLOAD_MISSING_MESSAGE,
    )
    .with_token("t");
    assert_eq!(
        text(r.to_json_bytes()),
        r#"{"id":"p","payload":"{\"error\":\"request payload is missing\"}","error_code":"PAYLOAD_UNAVAILABLE","error_message":"request payload is missing","request_token":"t"}"#
    );
}

#[test]
fn the_marshal_failure_fallback_matches_go_bytes() {
    assert_eq!(
        text(ResultRecord::marshal_failed("a<\"b")),
        r#"{"id":"a\u003c\"b","payload":"{\"error\":\"marshal failed\"}"}"#
    );
}

#[test]
fn from_json_reads_the_token_as_the_durable_go_consumer_does() {
    let r =
        ResultRecord::from_json(br#"{"id":"x","payload":"","request_token":"t"}"#).expect("parses");
    assert_eq!(r.request_token.as_deref(), Some("t"));
    for absent in [
        r#"{"id":"x","payload":""}"#,
        r#"{"id":"x","payload":"","request_token":""}"#,
        r#"{"id":"x","payload":"","request_token":null}"#,
    ] {
        let r = ResultRecord::from_json(absent.as_bytes()).expect("parses");
        assert_eq!(r.request_token, None, "{absent}");
    }
    assert!(
        ResultRecord::from_json(br#"{"id":"x","payload":"","request_token":7}"#).is_err(),
        "a non-string token is unparsable for the Go consumer"
    );
}

#[test]
fn the_delivery_limit_record_names_its_generation() {
    let generation = claim_core::Generation::new("poison", "9f86d081884c7d659a2feaa0c55ad015");
    let raw = claim_core::model::delivery_limit_record(&generation, 10, "q");
    let r = ResultRecord::from_json(raw.as_bytes()).expect("parses");
    assert_eq!(r.error_code, Some(ErrorCode::DeliveryLimit));
    assert_eq!(r.request_token.as_deref(), Some(generation.token.as_str()));
}
