//! The default HTTP handler against a stand-in gateway in this process (axum on 127.0.0.1:0).

#[path = "http_handler/feedback.rs"]
mod feedback;
#[path = "http_handler/stamps.rs"]
mod stamps;
#[path = "http_handler/support.rs"]
mod support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime};

use async_worker::http_handler::{Backoff, parse_retry_after};
use claim_core::wire::ErrorCode;
use rand::SeedableRng;
use rand::rngs::StdRng;
use support::*;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_2xx_answer_is_a_success_with_status_and_body() {
    let r = request("", r#"{"prompt":"x"}"#, Duration::from_secs(3600));
    let (outcome, log) = outcome_of(&r).await;
    assert_eq!(
        outcome,
        HandlerOutcome::Success {
            status: 200,
            body: r#"{"choices":[{"text":"hi"}]}"#.into()
        }
    );
    assert_eq!(last_seen(&log).path, "/v1/completions");
}

#[tokio::test]
async fn the_member_endpoint_replaces_the_queue_path() {
    let (outcome, log) = outcome_of(&simple("/v1/chat/completions")).await;
    assert_eq!(
        outcome,
        HandlerOutcome::Success {
            status: 201,
            body: "created".into()
        }
    );
    assert_eq!(last_seen(&log).path, "/v1/chat/completions");
}

#[tokio::test]
async fn payload_bytes_are_forwarded_unchanged() {
    let payload = r#"{ "b" : 1,"a":[1, 2.50, 1e3] ,"u":"\u00e9 <&>", "n":{"z":null}}"#;
    let r = request("", payload, Duration::from_secs(3600));
    let (_, log) = outcome_of(&r).await;
    assert_eq!(last_seen(&log).body, payload.as_bytes());
}

#[tokio::test]
async fn member_headers_and_the_objective_are_forwarded() {
    let (addr, log) = gateway().await;
    let headers = r#","headers":{"Authorization":"Bearer tok","X-Custom":"v1","Content-Type":"application/json; charset=utf-8","Host":"elsewhere","Content-Length":"1"}"#;
    let r = request(headers, r#"{"prompt":"x"}"#, Duration::from_secs(3600));
    let outcome = handle(&handler(addr, Some("batch-sheddable")), &r).await;
    assert!(
        matches!(outcome, HandlerOutcome::Success { status: 200, .. }),
        "{outcome:?}"
    );
    let seen = last_seen(&log);
    let get = |name: &str| -> Vec<&str> {
        seen.headers
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    };
    assert_eq!(get("authorization"), ["Bearer tok"]);
    assert_eq!(get("x-custom"), ["v1"]);
    assert_eq!(get("content-type"), ["application/json; charset=utf-8"]);
    assert_eq!(get("x-gateway-inference-objective"), ["batch-sheddable"]);
    assert_eq!(get("host"), [addr.to_string().as_str()]);
    assert_eq!(
        get("content-length"),
        [r#"{"prompt":"x"}"#.len().to_string().as_str()]
    );
}

#[tokio::test]
async fn content_type_defaults_to_json() {
    let (_, log) = outcome_of(&simple("")).await;
    let seen = last_seen(&log);
    assert!(
        seen.headers
            .contains(&("content-type".into(), "application/json".into()))
    );
    assert!(
        !seen
            .headers
            .iter()
            .any(|(k, _)| k == "x-gateway-inference-objective")
    );
}

#[tokio::test]
async fn a_header_that_is_not_valid_http_is_an_invalid_request() {
    let r = request(
        r#","headers":{"bad name":"v"}"#,
        "{}",
        Duration::from_secs(3600),
    );
    let (code, message, status) = expect_error(outcome_of(&r).await.0);
    assert_eq!(code, ErrorCode::InvalidRequest);
    assert!(message.contains("bad name"), "{message}");
    assert_eq!(status, None);
}

#[tokio::test]
async fn a_4xx_answer_is_an_inference_error_with_status_and_body() {
    let (outcome, _) = outcome_of(&simple("/bad")).await;
    assert_eq!(
        outcome,
        HandlerOutcome::Error {
            code: ErrorCode::InferenceError,
            message: r#"{"error":"bad prompt"}"#.into(),
            status: Some(400),
        }
    );
}

#[tokio::test]
async fn a_429_with_retry_after_seconds_retries_no_sooner_than_asked() {
    let (after, reason) = expect_retry(outcome_of(&simple("/busy")).await.0);
    assert!(after >= Duration::from_secs(30), "{after:?}");
    assert!(after < Duration::from_millis(37_500), "{after:?}");
    assert!(reason.contains("429"), "{reason}");
}

#[tokio::test]
async fn a_429_with_an_http_date_retry_after_is_honoured() {
    let (after, _) = expect_retry(outcome_of(&simple("/busy-until")).await.0);
    assert!(after >= Duration::from_secs(38), "{after:?}");
    assert!(after < Duration::from_secs(51), "{after:?}");
}

#[tokio::test]
async fn a_500_retries_with_jittered_exponential_backoff() {
    let (after, reason) = expect_retry(outcome_of(&simple("/fail")).await.0);
    assert!(
        after >= Duration::from_secs(2) && after < Duration::from_secs(4),
        "{after:?}"
    );
    assert!(reason.contains("500"), "{reason}");
    assert!(
        !reason.contains("boom"),
        "bodies stay out of reasons: {reason}"
    );
}

#[tokio::test]
async fn a_retry_never_lands_past_the_deadline() {
    let r = request(
        r#","endpoint":"/slow-fail""#,
        "{}",
        Duration::from_millis(800),
    );
    let (after, _) = expect_retry(outcome_of(&r).await.0);
    let left = Duration::from_millis(r.deadline.0.saturating_sub(now_ms()));
    assert!(
        after < Duration::from_millis(500) && after <= left + Duration::from_millis(50),
        "{after:?} vs {left:?}"
    );
}

#[tokio::test]
async fn a_refused_connection_retries() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let h = handler(SocketAddr::from(([127, 0, 0, 1], port)), None);
    let (after, reason) = expect_retry(handle(&h, &simple("")).await);
    assert!(after >= Duration::from_secs(2), "{after:?}");
    assert!(reason.contains("unreachable"), "{reason}");
}

#[tokio::test]
async fn cancellation_aborts_a_hanging_call_promptly() {
    let (addr, _) = gateway().await;
    let h = handler(addr, None);
    let r = simple("/hang");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let outcome = h.handle(&r, cancel).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(outcome, HandlerOutcome::Retry { after, .. } if after.is_zero()),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_hang_past_the_deadline_is_deadline_exceeded() {
    let r = request(r#","endpoint":"/hang""#, "{}", Duration::from_millis(300));
    let started = Instant::now();
    let (code, _, _) = expect_error(outcome_of(&r).await.0);
    assert_eq!(code, ErrorCode::DeadlineExceeded);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_queue_without_a_target_is_an_inference_error() {
    let h = HttpHandler::new(BTreeMap::new()).unwrap();
    let (code, message, _) = expect_error(handle(&h, &simple("")).await);
    assert_eq!(code, ErrorCode::InferenceError);
    assert!(message.contains("\"q\""), "{message}");
}

#[test]
fn backoff_doubles_from_two_seconds_with_equal_jitter_up_to_sixty() {
    let backoff = Backoff::default();
    let mut rng = StdRng::seed_from_u64(7);
    let hour = Duration::from_secs(3600);
    for (retry_count, low, high) in [
        (0, 2.0, 4.0),
        (1, 4.0, 8.0),
        (2, 8.0, 16.0),
        (9, 30.0, 60.0),
    ] {
        for _ in 0..50 {
            let d = backoff
                .delay(retry_count, None, hour, &mut rng)
                .as_secs_f64();
            assert!(d >= low && d < high, "retry {retry_count}: {d}");
        }
    }
}

#[test]
fn backoff_and_retry_after_stay_inside_the_time_left() {
    let backoff = Backoff::default();
    let mut rng = StdRng::seed_from_u64(11);
    for _ in 0..100 {
        let left = Duration::from_secs(10);
        let d = backoff.delay(5, Some(Duration::from_secs(600)), left, &mut rng);
        assert!(d < left, "{d:?}");
        assert!(
            d >= Duration::from_secs(5),
            "Retry-After is honoured up to half the time left: {d:?}"
        );
    }
}

#[test]
fn retry_after_reads_seconds_and_http_dates() {
    assert_eq!(parse_retry_after("120"), Some(Duration::from_secs(120)));
    assert_eq!(parse_retry_after(" 0 "), Some(Duration::ZERO));
    assert_eq!(
        parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
        Some(Duration::ZERO)
    );
    let soon = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(90));
    let d = parse_retry_after(&soon).unwrap();
    assert!(
        d > Duration::from_secs(85) && d <= Duration::from_secs(90),
        "{d:?}"
    );
    assert_eq!(parse_retry_after("soon"), None);
    assert_eq!(parse_retry_after("-5"), None);
}

#[test]
fn urls_are_joined_as_go_joins_them() {
    let t = |base: &str, path: &str| HttpTarget::new(base, path, None).unwrap();
    for (base, path, joined) in [
        ("http://gw", "/v1/completions", "http://gw/v1/completions"),
        ("http://gw/base/", "v1/x", "http://gw/base/v1/x"),
        ("http://gw//base", "//v1//x", "http://gw/base/v1/x"),
        ("http://gw/a/b", "../c", "http://gw/a/c"),
        ("http://gw", "/v1/", "http://gw/v1/"),
        ("http://gw", "", "http://gw/v1/completions"),
    ] {
        assert_eq!(t(base, path).url_for(None).as_str(), joined);
    }
    let target = t("https://gw:8443/p", "/v1/completions");
    for (endpoint, joined) in [
        ("/v1/embeddings", "https://gw:8443/p/v1/embeddings"),
        ("", "https://gw:8443/p/v1/completions"),
    ] {
        assert_eq!(target.url_for(Some(endpoint)).as_str(), joined);
    }
    assert_eq!(
        target.url_for(Some("http://evil/x")).host_str(),
        Some("gw"),
        "an endpoint is a path: it cannot change the host"
    );
    assert!(HttpTarget::new("gw:80", "/", None).is_err());
    assert!(HttpTarget::new("ftp://gw", "/", None).is_err());
}
