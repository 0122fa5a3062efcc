//! A stand-in inference gateway: an OpenAI-style completions endpoint with chosen latency and failure rates.
//!
//! Used by the demo, the chaos run and tests. It answers every POST with a
//! small completion JSON after a random delay, and fails a chosen fraction
//! with 500 or 429 so retries are exercised. [`StandInGateway::start_seeded`]
//! draws the delays and failures from a seeded generator, so a run can be
//! repeated (the chaos run prints its seed).

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use rand::SeedableRng;
use rand::rngs::StdRng;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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
    /// Fraction of calls that take `slow_latency` instead (slow inference,
    /// longer than a lease: only heartbeats keep such a claim).
    pub slow_rate: f64,
    pub slow_latency: Duration,
}

impl Default for GatewayBehaviour {
    fn default() -> Self {
        GatewayBehaviour {
            min_latency: Duration::from_millis(1),
            max_latency: Duration::from_millis(10),
            error_rate: 0.0,
            throttle_rate: 0.0,
            slow_rate: 0.0,
            slow_latency: Duration::ZERO,
        }
    }
}

impl GatewayBehaviour {
    /// Every call answered 200 after exactly `latency` (a stand-in for a
    /// model slower or faster than the lease, as a test needs).
    pub fn answering_after(latency: Duration) -> Self {
        GatewayBehaviour {
            min_latency: latency,
            max_latency: latency,
            ..GatewayBehaviour::default()
        }
    }
}

/// A running stand-in gateway.
#[derive(Debug)]
pub struct StandInGateway {
    pub addr: SocketAddr,
    calls: Arc<AtomicU64>,
    concurrency: Arc<Concurrency>,
    task: tokio::task::JoinHandle<()>,
}

impl StandInGateway {
    /// Starts on an ephemeral port of 127.0.0.1.
    pub async fn start(behaviour: GatewayBehaviour) -> std::io::Result<Self> {
        Self::start_on("127.0.0.1:0".parse().expect("literal address"), behaviour).await
    }

    pub async fn start_on(addr: SocketAddr, behaviour: GatewayBehaviour) -> std::io::Result<Self> {
        Self::serve(addr, behaviour, None).await
    }

    /// Starts on an ephemeral port of 127.0.0.1, drawing latencies and
    /// failures from a generator seeded with `seed`.
    pub async fn start_seeded(behaviour: GatewayBehaviour, seed: u64) -> std::io::Result<Self> {
        let addr = "127.0.0.1:0".parse().expect("literal address");
        Self::serve(
            addr,
            behaviour,
            Some(Mutex::new(StdRng::seed_from_u64(seed))),
        )
        .await
    }

    async fn serve(
        addr: SocketAddr,
        behaviour: GatewayBehaviour,
        seeded: Option<Mutex<StdRng>>,
    ) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let calls = Arc::new(AtomicU64::new(0));
        let concurrency = Arc::new(Concurrency::default());
        let state = Arc::new(GatewayState {
            behaviour,
            calls: calls.clone(),
            concurrency: concurrency.clone(),
            seeded,
        });
        let app = Router::new()
            .route("/{*path}", post(complete))
            .with_state(state);
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "stand-in gateway stopped");
            }
        });
        Ok(StandInGateway {
            addr,
            calls,
            concurrency,
            task,
        })
    }

    /// The base URL to configure as `igw_base_url`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests received so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// The most calls it was answering at one time so far (what a pool
    /// gate's concurrency limit bounds).
    pub fn max_concurrent_calls(&self) -> u64 {
        self.concurrency.max.load(Ordering::SeqCst)
    }
}

/// Calls being answered now, and the most there ever were at once.
#[derive(Debug, Default)]
struct Concurrency {
    now: AtomicU64,
    max: AtomicU64,
}

impl Concurrency {
    /// Counts a call in until the guard drops (also when the client hangs
    /// up mid-call and the handler's future is dropped).
    fn enter(&self) -> CallGuard<'_> {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
        CallGuard(self)
    }
}

struct CallGuard<'a>(&'a Concurrency);

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for StandInGateway {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct GatewayState {
    behaviour: GatewayBehaviour,
    calls: Arc<AtomicU64>,
    concurrency: Arc<Concurrency>,
    /// The seeded generator, or `None` for the thread's generator.
    seeded: Option<Mutex<StdRng>>,
}

impl GatewayState {
    /// A latency and a roll in `0..1` that picks the answer.
    fn draw(&self) -> (Duration, f64) {
        let draw = |rng: &mut dyn rand::RngCore| {
            let b = &self.behaviour;
            let spread = b.max_latency.saturating_sub(b.min_latency);
            let extra = spread.mul_f64(rand::Rng::random::<f64>(rng));
            let slow = rand::Rng::random::<f64>(rng) < b.slow_rate;
            let latency = if slow {
                b.slow_latency
            } else {
                b.min_latency + extra
            };
            (latency, rand::Rng::random::<f64>(rng))
        };
        match &self.seeded {
            Some(rng) => draw(&mut *rng.lock().unwrap_or_else(|p| p.into_inner())),
            None => draw(&mut rand::rng()),
        }
    }
}

async fn complete(State(state): State<Arc<GatewayState>>, body: Bytes) -> Response {
    let behaviour = state.behaviour;
    let n = state.calls.fetch_add(1, Ordering::Relaxed);
    let _answering = state.concurrency.enter();
    let (latency, roll) = state.draw();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn seeded(seed: u64) -> GatewayState {
        GatewayState {
            behaviour: GatewayBehaviour::default(),
            calls: Arc::default(),
            concurrency: Arc::default(),
            seeded: Some(Mutex::new(StdRng::seed_from_u64(seed))),
        }
    }

    #[test]
    fn one_seed_draws_one_sequence_of_latencies_and_answers() {
        let (a, b) = (seeded(7), seeded(7));
        let first: Vec<_> = (0..20).map(|_| a.draw()).collect();
        let again: Vec<_> = (0..20).map(|_| b.draw()).collect();
        assert_eq!(first, again);
        let other: Vec<_> = (0..20).map(|_| seeded(8).draw()).collect();
        assert_ne!(first, other);
    }

    #[test]
    fn the_most_calls_at_once_is_kept_after_calls_end() {
        let concurrency = Concurrency::default();
        let first = concurrency.enter();
        let second = concurrency.enter();
        drop(first);
        let third = concurrency.enter();
        drop((second, third));
        assert_eq!(concurrency.now.load(Ordering::SeqCst), 0);
        assert_eq!(concurrency.max.load(Ordering::SeqCst), 2);
    }
}
