//! The metric gates against a real Prometheus: it scrapes a stand-in model server every second, and the gates close as the stand-in's counts rise.
//!
//! The stand-in reports vLLM's `vllm:num_requests_running` and
//! `vllm:num_requests_waiting` (with the `inference_pool` label a
//! PodMonitor adds), the pool's ready pods and its flow-control
//! saturation, and for a second pool the per-pod queue size.
//! `prometheus-budget` (the third source for the first pool, as no
//! flow-control queue is reported; the second source for the other),
//! `prometheus-query` and `prometheus-saturation` read them through
//! Prometheus; `endpoint-scrape` reads the stand-in directly.
//!
//! Without the `prometheus` binary the test skips locally and fails when
//! `CI` is set (see `common/prometheus.rs`).

#![cfg(feature = "metric-gates")]

#[path = "common/prometheus.rs"]
mod prometheus;

use async_worker::gate::factory;
use async_worker::gate::{DispatchGate, GateEnv, GateOwner, Verdict};
use async_worker::test_support::gate_probe::{params, verdict};
use async_worker::test_support::http_stub::{HttpStub, Responder, StubRequest};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const POOL: &str = "e2e-pool";
/// A pool whose per-pod queue is reported (the budget cascade's second
/// source) while its vLLM running count (the third) stays 0.
const QUEUED: &str = "queued-pool";
/// How long Prometheus may take to start, scrape and answer with new counts.
const BOUND: Duration = Duration::from_secs(60);

/// The stand-in model server's counts, changed by the test.
#[derive(Debug, Default)]
struct Counts {
    running: AtomicU64,
    waiting: AtomicU64,
    /// Saturation in thousandths.
    saturation_milli: AtomicU64,
}

impl Counts {
    fn page(&self) -> String {
        let running = self.running.load(Ordering::SeqCst);
        let waiting = self.waiting.load(Ordering::SeqCst);
        let saturation = self.saturation_milli.load(Ordering::SeqCst) as f64 / 1000.0;
        format!(
            "# TYPE vllm:num_requests_running gauge\n\
             vllm:num_requests_running{{inference_pool=\"{POOL}\",model_name=\"m\"}} {running}\n\
             vllm:num_requests_running{{inference_pool=\"{QUEUED}\",model_name=\"m\"}} 0\n\
             # TYPE vllm:num_requests_waiting gauge\n\
             vllm:num_requests_waiting{{inference_pool=\"{POOL}\",model_name=\"m\"}} {waiting}\n\
             # TYPE inference_pool_ready_pods gauge\n\
             inference_pool_ready_pods{{name=\"{POOL}\"}} 2\n\
             inference_pool_ready_pods{{name=\"{QUEUED}\"}} 2\n\
             # TYPE inference_pool_per_pod_queue_size gauge\n\
             inference_pool_per_pod_queue_size{{name=\"{QUEUED}\"}} {waiting}\n\
             # TYPE inference_extension_flow_control_pool_saturation gauge\n\
             inference_extension_flow_control_pool_saturation{{inference_pool=\"{POOL}\"}} {saturation}\n"
        )
    }
}

fn gate(gate_type: &str, value: serde_json::Value, env: &GateEnv) -> Arc<dyn DispatchGate> {
    let owner = GateOwner::queue("q", "q", "default");
    factory::build(gate_type, &params(value), &owner, env)
        .unwrap_or_else(|e| panic!("{gate_type}: {e}"))
        .expect("a gate")
}

async fn apply(gate: &dyn DispatchGate) -> Verdict {
    verdict(gate).await.expect("a budget-only gate never fails")
}

/// Polls every gate's budget until each satisfies `done`, within [`BOUND`].
async fn until_budgets(
    what: &str,
    gates: &[(&str, &Arc<dyn DispatchGate>)],
    done: impl Fn(f64) -> bool,
) {
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        let mut budgets = Vec::new();
        for (name, gate) in gates {
            budgets.push((*name, gate.budget().await));
        }
        if budgets.iter().all(|(_, b)| done(*b)) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {BOUND:?}: {budgets:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn close_to(expected: f64) -> impl Fn(f64) -> bool {
    move |b| (b - expected).abs() < 1e-9
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metric_gates_close_as_the_model_servers_counts_rise() {
    if !prometheus::installed() {
        return;
    }
    let counts = Arc::new(Counts::default());
    let serving = counts.clone();
    let responder: Responder = Arc::new(move |_: &StubRequest| (200, serving.page()));
    let model_server = HttpStub::start(responder).await.expect("the stand-in");
    let prometheus = prometheus::start(&model_server.addr.to_string());
    let env = GateEnv {
        prometheus_url: Some(prometheus.url.clone()),
        prometheus_cache_ttl: Duration::ZERO,
        ..GateEnv::default()
    };
    // Closes at 2 pods x 2 running; T = baseline 0.05.
    let budget = gate(
        "prometheus-budget",
        json!({"pool": POOL, "max_concurrency": "2", "baseline": "0.05"}),
        &env,
    );
    // The per-pod queue (waiting) closes it at 2 per pod; its running
    // count, the next source, would keep it open.
    let queued = gate(
        "prometheus-budget",
        json!({"pool": QUEUED, "max_concurrency": "2", "baseline": "0.05"}),
        &env,
    );
    let waiting = format!("1 - sum(vllm:num_requests_waiting{{inference_pool=\"{POOL}\"}}) / 8");
    let query = gate(
        "prometheus-query",
        json!({"query": waiting, "pool": POOL}),
        &env,
    );
    let saturation = gate(
        "prometheus-saturation",
        json!({"pool": POOL, "threshold": "0.8"}),
        &env,
    );
    let scrape_url = format!("{}/metrics", model_server.url());
    let scrape = gate(
        "endpoint-scrape",
        json!({"url": scrape_url, "metric": "vllm:num_requests_waiting",
               "labels": {"inference_pool": POOL}, "max_count_per_pod": "8"}),
        &env,
    );
    let per_pod = gate(
        "endpoint-scrape",
        json!({"url": scrape_url, "metric": "vllm:num_requests_waiting", "max_count_per_pod": "8",
               "pods_url": scrape_url, "pods_metric": "inference_pool_ready_pods",
               "pods_labels": {"name": POOL}}),
        &env,
    );

    // Idle: the budget is 1 - 0.05, the query and the scrapes fully open,
    // saturation 0 leaves threshold 0.8 free.
    until_budgets(
        "prometheus-budget open",
        &[("budget", &budget), ("queued", &queued)],
        close_to(0.95),
    )
    .await;
    until_budgets(
        "query and scrapes open",
        &[
            ("query", &query),
            ("scrape", &scrape),
            ("per_pod", &per_pod),
        ],
        close_to(1.0),
    )
    .await;
    until_budgets(
        "saturation open",
        &[("saturation", &saturation)],
        close_to(0.8),
    )
    .await;
    for gate in [&budget, &query, &saturation, &scrape] {
        assert_eq!(apply(gate.as_ref()).await, Verdict::Continue);
    }

    counts.running.store(4, Ordering::SeqCst);
    counts.waiting.store(8, Ordering::SeqCst);
    counts.saturation_milli.store(900, Ordering::SeqCst);
    // The scrapes see the stand-in at once; 2 pods x 8 halves the share.
    assert_eq!(scrape.budget().await, 0.0);
    assert!((per_pod.budget().await - 0.5).abs() < 1e-9);
    until_budgets(
        "the Prometheus gates close",
        &[
            ("budget", &budget),
            ("queued", &queued),
            ("query", &query),
            ("saturation", &saturation),
        ],
        |b| b == 0.0,
    )
    .await;
    for gate in [&budget, &query, &saturation, &scrape] {
        assert_eq!(apply(gate.as_ref()).await, Verdict::Refuse);
    }
    drop(prometheus);
}
