//! The `flow` run's private Prometheus: `/usr/bin/prometheus` (or whatever `prometheus` is on PATH) on a free port with its own data dir, scraping the stand-in pool every second.

use std::time::{Duration, Instant};

/// How long Prometheus may take to start and hold a first sample.
const READY_BOUND: Duration = Duration::from_secs(60);

pub use async_worker::test_support::prometheus::Prometheus;

/// Why there is no Prometheus for the run (the row says it).
pub fn missing() -> Option<String> {
    let found = async_worker::test_support::prometheus::on_path();
    (!found).then(|| "prometheus-not-on-PATH".to_owned())
}

/// Starts Prometheus scraping `target` (`host:port`) every second, and
/// waits until a query answers with the target's running count.
pub async fn start(target: &str) -> Result<Prometheus, String> {
    let prometheus =
        Prometheus::start(target, "pool").map_err(|e| format!("cannot start prometheus: {e}"))?;
    until_scraped(&prometheus).await?;
    Ok(prometheus)
}

/// Polls an instant query until the pool's series is there.
async fn until_scraped(prometheus: &Prometheus) -> Result<(), String> {
    async_worker::http_handler::install_crypto_provider();
    let client = reqwest::Client::new();
    let query = format!(
        "{}/api/v1/query?query=vllm:num_requests_running",
        prometheus.url
    );
    let started = Instant::now();
    while started.elapsed() < READY_BOUND {
        let answer = client.get(&query).send().await;
        if let Ok(answer) = answer
            && let Ok(body) = answer.text().await
            && body.contains("\"value\"")
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Err(format!("prometheus held no sample within {READY_BOUND:?}"))
}
