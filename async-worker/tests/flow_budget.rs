//! Upstream's `budget.yaml` e2e scenario against the real binary and a real Prometheus: a queue behind `prometheus-budget` (pool `e2e-pool`, max_concurrency "1", baseline "0.05", `--prometheus-cache-ttl=0s`), one worker, Prometheus scraping a stand-in model server every second.
//!
//! The stand-in reports no flow-control queue, so the budget cascade's
//! later source (vLLM's running count over the ready pods) decides: idle,
//! the queue dispatches; one running request per ready pod closes it and
//! nothing is claimed or sent; back to idle, the held requests drain.
//!
//! Without the `prometheus` binary the test skips locally and fails when
//! `CI` is set (see `common/prometheus.rs`).

#![cfg(feature = "metric-gates")]

mod common;
#[path = "common/prometheus.rs"]
mod prometheus;

use async_worker::metrics as m;
use async_worker::test_support::http_stub::{HttpStub, Responder, StubRequest};
use async_worker::test_support::sample;
use common::flow::{self, BOUND, Gated};
use common::stage::Stage;
use common::worker::Worker;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const QUEUE_ID: &str = "budget";

/// The stand-in model server's page: `running` requests in the pool's one
/// ready pod (with the `inference_pool` label the chart's PodMonitor adds).
fn page(running: u64) -> String {
    format!(
        "# TYPE vllm:num_requests_running gauge\n\
         vllm:num_requests_running{{inference_pool=\"e2e-pool\",model_name=\"m\"}} {running}\n\
         # TYPE inference_pool_ready_pods gauge\n\
         inference_pool_ready_pods{{name=\"e2e-pool\"}} 1\n"
    )
}

/// Waits until the queue gate's `dispatch_budget` satisfies `done`.
async fn budget_until(worker: &Worker, what: &str, done: impl Fn(f64) -> bool) {
    let labels = [("queue_id", QUEUE_ID)];
    common::eventually(what, BOUND, async || {
        let page = worker.metrics().await;
        sample(&page, m::DISPATCH_BUDGET, &labels).is_some_and(&done)
    })
    .await;
}

async fn submit(stage: &mut Stage, id: &str) {
    let payload = serde_json::json!({"model": "m", "prompt": id});
    common::go_submit(&mut stage.conn, id, common::unix_now() + 300, payload).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prometheus_budget_gate_closes_while_the_pool_is_busy_and_drains_once_it_is_idle() {
    if !prometheus::installed() {
        return;
    }
    let Some(mut stage) = Stage::answering_after(Duration::from_millis(5)).await else {
        return;
    };
    let running = Arc::new(AtomicU64::new(0));
    let serving = running.clone();
    let responder: Responder =
        Arc::new(move |_: &StubRequest| (200, page(serving.load(Ordering::SeqCst))));
    let model_server = HttpStub::start(responder).await.expect("the stand-in");
    let prometheus = prometheus::start(&model_server.addr.to_string());
    let params =
        serde_json::json!({"pool": "e2e-pool", "max_concurrency": "1", "baseline": "0.05"});
    let config = flow::gated_queue(QUEUE_ID, &stage.gateway, "prometheus-budget", params);
    let prometheus_url = format!("--prometheus-url={}", prometheus.url);
    #[rustfmt::skip]
    let flags = [
        "--transport-config", &config,
        &prometheus_url,
        "--prometheus-cache-ttl=0s",
        "--concurrency", "1",
        "--claim-lease-ttl", "5s",
        "--drain-timeout", "5s",
    ];
    let mut worker = Worker::start_flags(&stage.url, &flags);

    // Idle: 1 - 0/(1 pod x 1) = 1 over the baseline: 0.95, open.
    submit(&mut stage, "open-1").await;
    flow::records_within(&mut stage.conn, 1).await;
    budget_until(&worker, "the budget open", |b| (b - 0.95).abs() < 1e-9).await;
    let page = worker.metrics().await;
    let available = [("queue_id", QUEUE_ID)];
    let read = sample(&page, m::GATE_METRIC_SOURCE_AVAILABLE, &available);
    assert_eq!(
        read,
        Some(1.0),
        "the source was read, not fallen back:\n{page}"
    );

    // One running request per ready pod: 0, closed.
    running.store(1, Ordering::SeqCst);
    budget_until(&worker, "the budget closed", |b| b == 0.0).await;
    for i in 1..=3 {
        submit(&mut stage, &format!("held-{i}")).await;
    }
    let gated = Gated::default_queue(QUEUE_ID);
    flow::assert_held(&worker, &mut stage.conn, &stage.gateway, gated, 3).await;

    running.store(0, Ordering::SeqCst);
    flow::records_within(&mut stage.conn, 4).await;
    let records = common::records(&mut stage.conn).await;
    let counts = common::records_per_id(&records);
    assert_eq!(counts.len(), 4, "one record each: {counts:?}");
    assert!(records.iter().all(|r| r.status_code == Some(200)));
    worker.stop_within(BOUND).await;

    // The first source's PromQL, logged at start, scales by max_concurrency 1.
    let log = worker.log();
    let first = log
        .lines()
        .find(|l| l.contains("metric gate source") && l.contains("index=0"));
    assert!(first.is_some_and(|l| l.contains("* 1))")), "{log}");
    drop(prometheus);
}
