//! The default [`Handler`]: POSTs each request's payload to its queue's inference gateway.
//!
//! As the Go processor does (`random_robin_policy.go`, `worker.go`,
//! `http_client.go` in llm-d-async):
//! - URL: the queue's `igw_base_url` joined (Go's `url.JoinPath`) with the
//!   member's `data.endpoint` when set, else the queue's `request_path_url`.
//!   The endpoint is a path: it cannot move the request to another host.
//! - Headers: `Content-Type: application/json`, then
//!   `x-gateway-inference-objective` when the queue names an objective, then the
//!   member's `data.headers`, which win over those two. `Host`,
//!   `Content-Length` and `Transfer-Encoding` from the member are dropped
//!   (Go's transport ignores them too); a header that is not valid HTTP is
//!   `INVALID_REQUEST`. Then the merge policy's stamps, which win over the
//!   member's: the fairness id ([`fairness`], on by default) and, under
//!   `tier-priority`, the lane's priority and objective headers
//!   ([`crate::merge_policy`]); and the W3C trace context from the
//!   member's `data.metadata` ([`trace_stamp`]), checked, always passed
//!   through.
//! - Body: the request's payload bytes, unchanged: the member's `data.payload`,
//!   or the payload the runtime fetched from its `internal.payload_ref`.
//! - Answers: 429 and 5xx retry, as do connection and body-read errors; any
//!   other 4xx is `INFERENCE_ERROR` with the status and body; everything else
//!   (2xx, and 1xx/3xx as Go does) is a success record with status and body.
//! - Each 429 counts in `shedded_requests_total`, as Go counts its
//!   rate-limit category.
//! - Retry delay: Go's `expBackoffDuration(retry_count + 1)`: equal jitter in
//!   `[t/2, t)` with `t = min(cap, time left, base · 2^(retry_count+1))`, base
//!   2 s, cap 60 s. A longer `Retry-After` (seconds or HTTP date) is honoured up
//!   to half the time left, jittered up by under 25%, so a retry always lands
//!   before the deadline. With no time left the last answer becomes a
//!   `DEADLINE_EXCEEDED` record (carrying the last status, if any).
//! - The cancellation token and the deadline abort the call at once.
//!
//! Payloads and response bodies are never logged.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use claim_core::Millis;
use claim_core::wire::ErrorCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};
use tokio_util::sync::CancellationToken;

use crate::gate::GatewayOutcome;
use crate::handler::{Handler, HandlerOutcome, Request};

mod backoff;
pub mod fairness;
mod target;
mod tier_stamps;
pub mod trace_stamp;

pub use backoff::{Backoff, parse_retry_after};

pub use fairness::Fairness;
pub use target::HttpTarget;

use crate::merge_policy::MergePolicy;
use crate::metrics::{self, QueueCount};
use crate::transform::{TransformInput, Transforms};
use tier_stamps::TierStamps;

/// Header Go sets from a queue's `inference_objective`.
pub const OBJECTIVE_HEADER: &str = "x-gateway-inference-objective";

/// Member headers never forwarded: the HTTP client sets them itself.
const DROPPED_HEADERS: [&str; 3] = ["host", "content-length", "transfer-encoding"];

/// Why a target or the handler could not be built.
#[derive(Debug, thiserror::Error)]
pub enum HttpHandlerError {
    #[error("{url:?} is not a URL: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("{url:?} must be an http:// or https:// URL, not {scheme}://")]
    Scheme { url: String, scheme: String },
    #[error("cannot build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// Told what each gateway call showed, with the request it was for (its
/// `parsed.labels` as the gates left them); see [`HttpHandler::with_feedback`].
pub type Feedback = Arc<dyn Fn(&Request, &GatewayOutcome) + Send + Sync>;

/// The default handler; one shared, pooled HTTP client for every queue.
#[derive(Debug, Clone)]
pub struct HttpHandler {
    client: reqwest::Client,
    targets: HashMap<String, HttpTarget>,
    backoff: Backoff,
    fairness: Fairness,
    tiers: Option<TierStamps>,
    transforms: Transforms,
    feedback: Option<FeedbackHook>,
}

/// A [`Feedback`] a handler can derive `Debug` with.
#[derive(Clone)]
struct FeedbackHook(Feedback);

impl std::fmt::Debug for FeedbackHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FeedbackHook")
    }
}

impl HttpHandler {
    /// A handler posting each queue's requests (by queue id) to its target.
    pub fn new(
        targets: impl IntoIterator<Item = (String, HttpTarget)>,
    ) -> Result<Self, HttpHandlerError> {
        install_crypto_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(90))
            .build()?;
        Ok(Self::with_client(client, targets))
    }

    /// The same, with a client the caller built.
    pub fn with_client(
        client: reqwest::Client,
        targets: impl IntoIterator<Item = (String, HttpTarget)>,
    ) -> Self {
        HttpHandler {
            client,
            targets: targets.into_iter().collect(),
            backoff: Backoff::default(),
            fairness: Fairness::default(),
            tiers: None,
            transforms: Transforms::default(),
            feedback: None,
        }
    }

    /// Reports every gateway call, once, to `feedback`: the answer or the
    /// failure, its send time and the gateway's advice headers. The
    /// processor routes it to the request's pool and queue gates
    /// (`DispatchGate::observe`); called on the handler's task, so it must
    /// not block.
    pub fn with_feedback(mut self, feedback: Feedback) -> Self {
        self.feedback = Some(FeedbackHook(feedback));
        self
    }

    fn report(&self, request: &Request, outcome: &GatewayOutcome) {
        if let Some(FeedbackHook(feedback)) = &self.feedback {
            feedback(request, outcome);
        }
    }

    /// Stamps what a merge policy asks for (fairness is on by default,
    /// without a policy too). Refuses an illegal fairness header name.
    pub fn with_policy(mut self, policy: &MergePolicy) -> Result<Self, String> {
        let fairness = policy.fairness();
        self.fairness = Fairness::new(fairness.header.as_deref(), fairness.attribute.as_deref())?;
        self.tiers = match policy {
            MergePolicy::TierPriority(tiers) => Some(TierStamps::new(tiers)),
            MergePolicy::RandomRobin { .. } => None,
        };
        Ok(self)
    }

    /// Checks and rewrites bodies with these transforms
    /// (`--transform-config-file`); none by default.
    pub fn with_transforms(mut self, transforms: Transforms) -> Self {
        self.transforms = transforms;
        self
    }

    /// The body to send: the payload, or what the first transform that
    /// owns the request makes of it (its content type replacing JSON's).
    /// An error is the `INVALID_REQUEST` record's message.
    fn body_of(&self, request: &Request, headers: &mut HeaderMap) -> Result<Vec<u8>, String> {
        let payload = request.parsed.payload.get();
        if self.transforms.is_empty() {
            return Ok(payload.as_bytes().to_vec());
        }
        match self.transforms.prepare(transform_input(request))? {
            None => Ok(payload.as_bytes().to_vec()),
            Some(rewritten) => {
                let content_type = HeaderValue::from_str(&rewritten.content_type)
                    .map_err(|_| "a transform made an invalid content type".to_owned())?;
                headers.insert(CONTENT_TYPE, content_type);
                Ok(rewritten.body)
            }
        }
    }

    /// The headers of one request: the target's and the member's, then the
    /// policy's stamps.
    fn headers_of(&self, target: &HttpTarget, request: &Request) -> Result<HeaderMap, String> {
        let mut headers = target.headers(&request.parsed.headers)?;
        self.fairness.stamp(&mut headers, &request.parsed.metadata);
        trace_stamp::stamp(&mut headers, &request.parsed.metadata);
        if let Some(tiers) = &self.tiers {
            tiers.stamp(&mut headers, &request.parsed.labels)?;
        }
        Ok(headers)
    }

    /// Replaces the retry backoff (base 2 s, cap 60 s by default).
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// One gateway call sent at `sent_at`: what a learning gate sees of
    /// it, and the answer's status and body.
    async fn call(
        &self,
        url: Url,
        headers: HeaderMap,
        body: Vec<u8>,
        sent_at: tokio::time::Instant,
    ) -> (
        GatewayOutcome,
        Result<(StatusCode, Vec<u8>), reqwest::Error>,
    ) {
        let sent = self.client.post(url).headers(headers).body(body).send();
        let response = match sent.await {
            Ok(response) => response,
            Err(e) => return (GatewayOutcome::failed(sent_at), Err(e)),
        };
        let status = response.status();
        let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok());
        let retry_after = header(reqwest::header::RETRY_AFTER.as_str()).and_then(parse_retry_after);
        let outcome = GatewayOutcome::answered(sent_at, status.as_u16(), header, retry_after);
        match response.bytes().await {
            Ok(body) => (outcome, Ok((status, body.to_vec()))),
            Err(e) => (outcome.unread(), Err(e)),
        }
    }

    /// A retry, or with no time left a `DEADLINE_EXCEEDED` carrying the last answer.
    fn retry(
        &self,
        request: &Request,
        retry_after: Option<Duration>,
        reason: String,
        last: Option<(u16, String)>,
    ) -> HandlerOutcome {
        let left = time_left(request.deadline);
        if left.is_zero() {
            let (status, message) = match last {
                Some((status, body)) => (Some(status), body),
                None => (None, format!("deadline passed; last attempt: {reason}")),
            };
            return HandlerOutcome::Error {
                code: ErrorCode::DeadlineExceeded,
                message,
                status,
            };
        }
        let after = self.backoff.delay(
            request.parsed.retry_count,
            retry_after,
            left,
            &mut rand::rng(),
        );
        tracing::debug!(id = %request.parsed.id, ?after, %reason, "gateway call will be retried");
        HandlerOutcome::Retry { after, reason }
    }
}

#[async_trait]
impl Handler for HttpHandler {
    /// The transforms' checks (`INVALID_REQUEST` with Go's message).
    fn check(&self, request: &Request) -> Result<(), (ErrorCode, String)> {
        if self.transforms.is_empty() {
            return Ok(());
        }
        let input = transform_input(request);
        (self.transforms.validate(input)).map_err(|message| (ErrorCode::InvalidRequest, message))
    }

    async fn handle(&self, request: &Request, cancel: CancellationToken) -> HandlerOutcome {
        let Some(target) = self.targets.get(&request.queue_id) else {
            return HandlerOutcome::error(
                ErrorCode::InferenceError,
                format!(
                    "no inference gateway is configured for queue {:?}",
                    request.queue_id
                ),
            );
        };
        let mut headers = match self.headers_of(target, request) {
            Ok(h) => h,
            Err(message) => return HandlerOutcome::error(ErrorCode::InvalidRequest, message),
        };
        let body = match self.body_of(request, &mut headers) {
            Ok(body) => body,
            Err(message) => return HandlerOutcome::error(ErrorCode::InvalidRequest, message),
        };
        let url = target.url_for(request.parsed.endpoint.as_deref());
        let left = time_left(request.deadline);
        if left.is_zero() {
            return HandlerOutcome::error(
                ErrorCode::DeadlineExceeded,
                "deadline passed before the gateway was called",
            );
        }
        tracing::debug!(id = %request.parsed.id, %url, "calling the gateway");
        let span = trace_stamp::gateway_span(&mut headers);
        let sent_at = tokio::time::Instant::now();
        let abandoned = || self.report(request, &GatewayOutcome::failed(sent_at));
        let (outcome, answer) = tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                abandoned();
                return HandlerOutcome::Retry {
                    after: Duration::ZERO,
                    reason: "cancelled before the gateway answered".into(),
                };
            }
            _ = tokio::time::sleep(left) => {
                abandoned();
                return HandlerOutcome::error(
                    ErrorCode::DeadlineExceeded,
                    "deadline passed while waiting for the gateway",
                );
            }
            answer = tracing::Instrument::instrument(self.call(url, headers, body, sent_at), span) => answer,
        };
        self.report(request, &outcome);
        let retry_after = outcome.retry_after;
        match answer {
            Err(e) => self.retry(request, None, format!("gateway unreachable: {e}"), None),
            Ok((status, body)) => {
                let code = status.as_u16();
                tracing::debug!(id = %request.parsed.id, status = code, "gateway answered");
                let body = String::from_utf8_lossy(&body).into_owned();
                if status == StatusCode::TOO_MANY_REQUESTS {
                    // Go's rate-limit category: shed, then retried.
                    metrics::count(&request.queue_name, QueueCount::Shedded, 1);
                }
                if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
                    let reason = format!("gateway answered {status}");
                    self.retry(request, retry_after, reason, Some((code, body)))
                } else if status.is_client_error() {
                    HandlerOutcome::Error {
                        code: ErrorCode::InferenceError,
                        message: body,
                        status: Some(code),
                    }
                } else {
                    HandlerOutcome::Success { status: code, body }
                }
            }
        }
    }
}

/// What the transforms read of a request.
fn transform_input(request: &Request) -> TransformInput<'_> {
    TransformInput {
        payload: request.parsed.payload.get(),
        metadata: &request.parsed.metadata,
        deadline_secs: request.parsed.deadline,
    }
}

/// Time from now until `deadline` (zero once it has passed).
fn time_left(deadline: Millis) -> Duration {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Duration::from_millis(deadline.0).saturating_sub(now)
}

/// Makes ring the process's rustls provider unless one is installed already.
///
/// reqwest is built without a provider of its own (ring builds with a C
/// compiler alone, and claim-redis uses it too), so any `reqwest::Client` in
/// this process needs this first; [`HttpHandler::new`] calls it.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
