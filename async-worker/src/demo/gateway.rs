//! A stand-in inference gateway: an OpenAI-style completions endpoint with chosen latency and failure rates.
//!
//! Used by the demo, the chaos run and tests. It answers every POST with a
//! small completion JSON after a random delay, and fails a chosen fraction
//! with 500 or 429 so retries are exercised.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How the stand-in behaves.
#[derive(Debug, Clone, Copy)]
pub struct GatewayBehaviour {
    pub min_latency: Duration,
    pub max_latency: Duration,
    /// Fraction of calls answered 500.
    pub error_rate: f64,
    /// Fraction of calls answered 429 with `Retry-After: 1`.
    pub throttle_rate: f64,
}

impl Default for GatewayBehaviour {
    fn default() -> Self {
        GatewayBehaviour {
            min_latency: Duration::from_millis(1),
            max_latency: Duration::from_millis(10),
            error_rate: 0.0,
            throttle_rate: 0.0,
        }
    }
}

/// A running stand-in gateway.
#[derive(Debug)]
pub struct StandInGateway {
    pub addr: SocketAddr,
    calls: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl StandInGateway {
    /// Starts on an ephemeral port of 127.0.0.1.
    pub async fn start(behaviour: GatewayBehaviour) -> std::io::Result<Self> {
        Self::start_on("127.0.0.1:0".parse().expect("literal address"), behaviour).await
    }

    pub async fn start_on(addr: SocketAddr, behaviour: GatewayBehaviour) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let calls = Arc::new(AtomicU64::new(0));
        let app = Router::new()
            .route("/{*path}", post(complete))
            .with_state((behaviour, calls.clone()));
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "stand-in gateway stopped");
            }
        });
        Ok(StandInGateway { addr, calls, task })
    }

    /// The base URL to configure as `igw_base_url`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests received so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

impl Drop for StandInGateway {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn complete(
    State((behaviour, calls)): State<(GatewayBehaviour, Arc<AtomicU64>)>,
    body: Bytes,
) -> Response {
    let n = calls.fetch_add(1, Ordering::Relaxed);
    let (latency, roll) = {
        let mut rng = rand::rng();
        let spread = behaviour.max_latency.saturating_sub(behaviour.min_latency);
        let extra = spread.mul_f64(rand::Rng::random::<f64>(&mut rng));
        (
            behaviour.min_latency + extra,
            rand::Rng::random::<f64>(&mut rng),
        )
    };
    tokio::time::sleep(latency).await;
    if roll < behaviour.error_rate {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "stand-in gateway failure",
        )
            .into_response();
    }
    if roll < behaviour.error_rate + behaviour.throttle_rate {
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "1")],
            "slow down",
        )
            .into_response();
    }
    let answer = serde_json::json!({
        "id": format!("cmpl-{n}"),
        "object": "text_completion",
        "choices": [{"index": 0, "text": "ok", "finish_reason": "stop"}],
        "usage": {"prompt_tokens": body.len(), "completion_tokens": 1},
    });
    (
        StatusCode::OK,
        [("content-type", "application/json")],
        answer.to_string(),
    )
        .into_response()
}
