//! Health endpoints (`/healthz`, `/readyz`) and the Prometheus `/metrics` endpoint, over axum.
//!
//! The metrics recorder is metrics-exporter-prometheus's, installed once per
//! process; `/metrics` renders it, after reading the process's own figures
//! (`process_*`: CPU, memory, open files, threads, start time; metrics-process
//! reads them from `/proc`), so a scrape sees them as of that moment. Histograms are exported as Prometheus
//! histograms, not summaries: the Go processor's with Go's buckets (in
//! milliseconds, [`crate::metrics::HISTOGRAM_BUCKETS`]), any other with
//! [`HISTOGRAM_BUCKETS`]. Both servers stop when the token given to them fires.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Bucket bounds, in seconds, of a histogram that is not one of ours (an application's).
pub const HISTOGRAM_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    600.0,
];

/// How often the recorder's histogram storage is compacted.
const UPKEEP_INTERVAL: Duration = Duration::from_secs(5);

/// What the health endpoints report; the runtime's `Health` is one.
pub trait HealthProbe: Send + Sync + 'static {
    /// The process is working (not wedged): `/healthz`.
    fn is_alive(&self) -> bool;
    /// The process should get traffic: store reachable and consuming: `/readyz`.
    fn is_ready(&self) -> bool;
    /// Why it is not ready, for the `/readyz` body (a fixed text by default).
    fn not_ready_because(&self) -> Option<String> {
        (!self.is_ready()).then(|| "not ready".to_owned())
    }
}

/// Why an endpoint could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source}; pick a free port or 0 to turn the endpoint off")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot install the Prometheus recorder: {0}")]
    Recorder(String),
}

/// A running endpoint.
#[derive(Debug)]
pub struct Server {
    /// The address it listens on (the real port when 0 was asked).
    pub local_addr: SocketAddr,
    /// Ends when the shutdown token fires, or with the server's I/O error.
    pub task: JoinHandle<std::io::Result<()>>,
}

/// `/healthz`: 200 while alive, else 503. `/readyz`: 200 when ready, else 503.
pub fn health_router(probe: Arc<dyn HealthProbe>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(probe)
}

async fn healthz(State(probe): State<Arc<dyn HealthProbe>>) -> (StatusCode, &'static str) {
    if probe.is_alive() {
        (StatusCode::OK, "ok\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not alive\n")
    }
}

async fn readyz(State(probe): State<Arc<dyn HealthProbe>>) -> (StatusCode, String) {
    match probe.not_ready_because() {
        None => (StatusCode::OK, "ready\n".to_owned()),
        Some(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {why}\n"),
        ),
    }
}

/// `/metrics` in the Prometheus text format.
pub fn metrics_router(handle: PrometheusHandle) -> Router {
    let process = metrics_process::Collector::default();
    process.describe();
    Router::new()
        .route("/metrics", get(render))
        .with_state((handle, Arc::new(process)))
}

type MetricsState = (PrometheusHandle, Arc<metrics_process::Collector>);

async fn render(State((handle, process)): State<MetricsState>) -> String {
    process.collect();
    handle.render()
}

/// Installs the process-wide Prometheus recorder (once per process) and
/// starts compacting its histograms in the background.
pub fn install_recorder() -> Result<PrometheusHandle, ServeError> {
    let recorder = |e: metrics_exporter_prometheus::BuildError| ServeError::Recorder(e.to_string());
    let mut builder = PrometheusBuilder::new()
        .set_buckets(HISTOGRAM_BUCKETS)
        .map_err(recorder)?;
    for (name, buckets) in crate::metrics::HISTOGRAM_BUCKETS {
        builder = builder
            .set_buckets_for_metric(Matcher::Full(name.to_owned()), buckets)
            .map_err(recorder)?;
    }
    let handle = builder.install_recorder().map_err(recorder)?;
    crate::metrics::build_info();
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(UPKEEP_INTERVAL);
        loop {
            tick.tick().await;
            upkeep.run_upkeep();
        }
    });
    Ok(handle)
}

/// Serves `router` on `addr` until `shutdown` fires. `[::]` (the
/// processor's default) is dual-stack: Linux accepts IPv4 on it too. Where
/// the host has no IPv6 (the address family is missing or unavailable),
/// `[::]` falls back to `0.0.0.0` on the same port, with a warning.
pub async fn serve(
    addr: SocketAddr,
    router: Router,
    shutdown: CancellationToken,
) -> Result<Server, ServeError> {
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Err(e) if addr.ip() == std::net::Ipv6Addr::UNSPECIFIED && no_ipv6(&e) => {
            let v4 = SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, addr.port()));
            tracing::warn!(%addr, error = %e, fallback = %v4, "no IPv6 here; listening on IPv4 only");
            tokio::net::TcpListener::bind(v4).await
        }
        bound => bound,
    }
    .map_err(|source| ServeError::Bind { addr, source })?;
    let local_addr = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;
    let task = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await
    });
    Ok(Server { local_addr, task })
}

/// Whether binding failed because the host has no IPv6: the address family
/// is not supported (`EAFNOSUPPORT`), or no IPv6 address can be bound.
fn no_ipv6(error: &std::io::Error) -> bool {
    const EAFNOSUPPORT: i32 = 97; // Linux's errno for a missing address family
    error.raw_os_error() == Some(EAFNOSUPPORT)
        || error.kind() == std::io::ErrorKind::AddrNotAvailable
}

/// Serves `/healthz` and `/readyz` on `addr`.
pub async fn serve_health(
    addr: SocketAddr,
    probe: Arc<dyn HealthProbe>,
    shutdown: CancellationToken,
) -> Result<Server, ServeError> {
    serve(addr, health_router(probe), shutdown).await
}

/// Installs the recorder and serves `/metrics` on `addr`.
pub async fn install_metrics(
    addr: SocketAddr,
    shutdown: CancellationToken,
) -> Result<(PrometheusHandle, Server), ServeError> {
    let handle = install_recorder()?;
    let server = serve(addr, metrics_router(handle.clone()), shutdown).await?;
    Ok((handle, server))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[derive(Default)]
    struct Flags {
        alive: AtomicBool,
        ready: AtomicBool,
    }

    impl HealthProbe for Flags {
        fn is_alive(&self) -> bool {
            self.alive.load(Ordering::SeqCst)
        }
        fn is_ready(&self) -> bool {
            self.ready.load(Ordering::SeqCst)
        }
    }

    async fn status(addr: SocketAddr, path: &str) -> u16 {
        reqwest::get(format!("http://{addr}{path}"))
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    #[tokio::test]
    async fn readyz_follows_readiness_and_healthz_follows_liveness() {
        let flags = Arc::new(Flags::default());
        let shutdown = CancellationToken::new();
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        let server = serve_health(addr, flags.clone(), shutdown.clone())
            .await
            .unwrap();
        crate::http_handler::install_crypto_provider();
        flags.alive.store(true, Ordering::SeqCst);
        assert_eq!(status(server.local_addr, "/healthz").await, 200);
        assert_eq!(status(server.local_addr, "/readyz").await, 503);
        flags.ready.store(true, Ordering::SeqCst);
        assert_eq!(status(server.local_addr, "/readyz").await, 200);
        flags.alive.store(false, Ordering::SeqCst);
        assert_eq!(status(server.local_addr, "/healthz").await, 503);
        shutdown.cancel();
        server.task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn metrics_endpoint_renders_recorded_metrics_as_prometheus_text() {
        let shutdown = CancellationToken::new();
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        let (_handle, server) = install_metrics(addr, shutdown.clone()).await.unwrap();
        crate::http_handler::install_crypto_provider();
        metrics::counter!("app_things_total", "queue" => "q").increment(2);
        metrics::histogram!("app_latency_seconds").record(0.2);
        let spec = crate::config::QueueSpec::new("q");
        crate::metrics::register_queue(&spec);
        crate::metrics::queue_handle("q").inference_latency(Duration::from_millis(40));
        let text = reqwest::get(format!("http://{}/metrics", server.local_addr))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(text.contains("app_things_total{queue=\"q\"} 2"), "{text}");
        assert!(
            text.contains("app_latency_seconds_bucket{le=\"0.25\"} 1"),
            "{text}"
        );
        // Go's buckets, in milliseconds, for Go's histograms.
        let q = r#"queue_id="q",queue_name="q",pool_name="default""#;
        let inference = crate::metrics::INFERENCE_LATENCY;
        for (le, n) in [("25", 0), ("50", 1), ("120000", 1), ("+Inf", 1)] {
            let line = format!("{inference}_bucket{{{q},le=\"{le}\"}} {n}\n");
            assert!(text.contains(&line), "no {line} in:\n{text}");
        }
        let residence = format!(
            "{}_bucket{{{q},le=\"86400000\"}} 0",
            crate::metrics::QUEUE_RESIDENCE
        );
        assert!(text.contains(&residence), "{text}");
        shutdown.cancel();
        server.task.await.unwrap().unwrap();
    }
}
