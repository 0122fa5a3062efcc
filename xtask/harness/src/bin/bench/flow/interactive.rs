//! The `flow` run's interactive users: open-loop Poisson arrivals sent straight to the stand-in pool, each on its own task, so a slow pool never slows the arrivals.

use super::pool::INTERACTIVE_PATH;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What the client counted (the waits themselves the pool records).
#[derive(Debug, Default)]
pub struct Sent {
    pub requests: AtomicU64,
    /// Requests that got no 200 (a transport error or another status).
    pub failed: AtomicU64,
}

/// The time to the next arrival of a Poisson process of `rate` per second.
fn next_gap(rate: f64) -> Duration {
    let u: f64 = rand::random();
    // 1 − u is in (0, 1], so its logarithm is finite.
    Duration::from_secs_f64(-(1.0 - u).ln() / rate)
}

/// Sends requests to `pool_url` at `rate` per second until `stop`.
pub async fn run(pool_url: String, rate: f64, stop: CancellationToken) -> Arc<Sent> {
    async_worker::http_handler::install_crypto_provider();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()
        .expect("an HTTP client");
    let url = format!("{pool_url}{INTERACTIVE_PATH}");
    let sent = Arc::new(Sent::default());
    let mut due = tokio::time::Instant::now();
    loop {
        due += next_gap(rate);
        tokio::select! {
            () = stop.cancelled() => break,
            () = tokio::time::sleep_until(due) => {}
        }
        let (client, url, sent) = (client.clone(), url.clone(), sent.clone());
        sent.requests.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            let answer = client.post(url).body("{}").send().await;
            if !answer.is_ok_and(|a| a.status().is_success()) {
                sent.failed.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    sent
}
