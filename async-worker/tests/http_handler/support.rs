//! The stand-in gateway the HTTP handler tests call, and the requests and handlers they build.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use async_worker::http_handler::{HttpHandler, HttpTarget};
use async_worker::test_support::serve_on_loopback;
pub use async_worker::{Handler, HandlerOutcome, Request};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use claim_core::wire::{ErrorCode, parse_member};
use claim_core::{Generation, Member, Millis, Score};
use tokio_util::sync::CancellationToken;

/// What the gateway saw of the last request.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    pub body: Vec<u8>,
    pub headers: Vec<(String, String)>,
    pub path: String,
}

pub type Log = Arc<Mutex<Option<Seen>>>;

pub async fn record(log: &Log, path: &str, headers: &HeaderMap, body: &Bytes) {
    let headers = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("?").to_owned()))
        .collect();
    *log.lock().unwrap() = Some(Seen {
        body: body.to_vec(),
        headers,
        path: path.to_owned(),
    });
}

/// A stand-in gateway: each path answers one way.
pub async fn gateway() -> (SocketAddr, Log) {
    let log: Log = Arc::default();
    async fn ok(State(log): State<Log>, headers: HeaderMap, body: Bytes) -> impl IntoResponse {
        record(&log, "/v1/completions", &headers, &body).await;
        (StatusCode::OK, r#"{"choices":[{"text":"hi"}]}"#)
    }
    async fn chat(State(log): State<Log>, headers: HeaderMap, body: Bytes) -> impl IntoResponse {
        record(&log, "/v1/chat/completions", &headers, &body).await;
        (StatusCode::CREATED, "created")
    }
    async fn bad() -> impl IntoResponse {
        (StatusCode::BAD_REQUEST, r#"{"error":"bad prompt"}"#)
    }
    async fn busy() -> impl IntoResponse {
        (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "30")],
            "slow down",
        )
    }
    async fn busy_until() -> impl IntoResponse {
        let at = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(40));
        (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", at)],
            "slow down",
        )
    }
    async fn saturated() -> impl IntoResponse {
        (
            StatusCode::TOO_MANY_REQUESTS,
            [
                ("retry-after", "5"),
                ("x-llm-d-request-dropped-reason", "rejected-saturated"),
            ],
            "saturated",
        )
    }
    async fn advised() -> impl IntoResponse {
        (
            StatusCode::OK,
            [
                ("x-llm-d-flow-queue-duration-ms", "125"),
                ("x-llm-d-flow-band-headroom", "3"),
            ],
            "ok",
        )
    }
    async fn fail() -> impl IntoResponse {
        (StatusCode::INTERNAL_SERVER_ERROR, "boom")
    }
    async fn slow_fail() -> impl IntoResponse {
        tokio::time::sleep(Duration::from_millis(300)).await;
        (StatusCode::SERVICE_UNAVAILABLE, "overloaded")
    }
    async fn hang() -> impl IntoResponse {
        std::future::pending::<()>().await;
        "never"
    }
    let app = Router::new()
        .route("/v1/completions", post(ok))
        .route("/v1/chat/completions", post(chat))
        .route("/bad", post(bad))
        .route("/busy", post(busy))
        .route("/busy-until", post(busy_until))
        .route("/saturated", post(saturated))
        .route("/advised", post(advised))
        .route("/fail", post(fail))
        .route("/slow-fail", post(slow_fail))
        .route("/hang", post(hang))
        .with_state(log.clone());
    (serve_on_loopback(app).await, log)
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A request of queue `q` whose member has `data` fields spliced in and a
/// deadline `ttl` from now.
pub fn request(data_extra: &str, payload: &str, ttl: Duration) -> Request {
    let deadline = now_ms() + ttl.as_millis() as u64;
    let member = format!(
        r#"{{"internal":{{"request_token":"t1","retry_count":0}},"request_kind":"redis","data":{{"id":"r1","deadline":{}{data_extra},"payload":{payload}}}}}"#,
        deadline.div_ceil(1000)
    );
    let parsed = parse_member(member.as_bytes()).expect("the member parses");
    Request {
        queue_id: "q".into(),
        queue_name: "q".into(),
        generation: Generation::new("r1", "t1"),
        member: Member::new(member.into_bytes()),
        score: Score(deadline.div_ceil(1000) as f64),
        parsed,
        deadline: Millis(deadline),
        redeliveries: 0,
    }
}

pub fn simple(endpoint: &str) -> Request {
    request(
        &format!(r#","endpoint":"{endpoint}""#),
        r#"{"prompt":"x"}"#,
        Duration::from_secs(3600),
    )
}

pub fn handler(addr: SocketAddr, objective: Option<&str>) -> HttpHandler {
    let target = HttpTarget::new(
        &format!("http://{addr}"),
        "/v1/completions",
        objective.map(str::to_owned),
    )
    .unwrap();
    HttpHandler::new([("q".to_owned(), target)]).unwrap()
}

pub async fn handle(h: &HttpHandler, r: &Request) -> HandlerOutcome {
    h.handle(r, CancellationToken::new()).await
}

/// `r` handled by the default handler (no objective) against a fresh
/// stand-in gateway; the outcome and the gateway's log.
pub async fn outcome_of(r: &Request) -> (HandlerOutcome, Log) {
    let (addr, log) = gateway().await;
    (handle(&handler(addr, None), r).await, log)
}

/// What the gateway saw of the last request (fails when it saw none).
pub fn last_seen(log: &Log) -> Seen {
    log.lock()
        .unwrap()
        .clone()
        .expect("the gateway saw a request")
}

/// The delay and reason of a retry outcome; fails on any other outcome.
pub fn expect_retry(outcome: HandlerOutcome) -> (Duration, String) {
    match outcome {
        HandlerOutcome::Retry { after, reason } => (after, reason),
        other => panic!("expected a retry, got {other:?}"),
    }
}

/// The code, message and status of an error outcome; fails on any other outcome.
pub fn expect_error(outcome: HandlerOutcome) -> (ErrorCode, String, Option<u16>) {
    match outcome {
        HandlerOutcome::Error {
            code,
            message,
            status,
        } => (code, message, status),
        other => panic!("expected an error, got {other:?}"),
    }
}
