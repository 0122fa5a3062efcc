//! The real binary started with the argv the upstream chart renders for its flow-control values (`ap.workerPools`, `ap.requestMergePolicyConfig`, `ap.prometheusURL`/`prometheusCacheTTL`, `ap.redis.queuesConfig` with gates, and the single-queue `ap.redis.gateType`/`gateParams`), its ConfigMap's files where the chart mounts them (a temp dir here), drains its queues through their gates.
//!
//! A stand-in Prometheus answers every instant query with one sample the
//! test sets, so the gates that read it open and close on cue.

#[allow(dead_code)]
#[path = "../src/bin/async-worker/settings/tests/chart.rs"]
mod chart;
mod common;

use async_worker::test_support::http_stub::{HttpStub, Responder, StubRequest};
use chart::*;
use claim_core::wire::Envelope;
use common::chart::start_as_chart;
use common::flow::{self, BOUND, ConfigDir, Gated};
use common::stage::Stage;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A stand-in Prometheus whose every query returns `value` (thousandths).
struct StandInPrometheus {
    stub: HttpStub,
    value: Arc<AtomicU64>,
}

impl StandInPrometheus {
    async fn answering(value: f64) -> StandInPrometheus {
        let value = Arc::new(AtomicU64::new((value * 1000.0) as u64));
        let answer = value.clone();
        let responder: Responder = Arc::new(move |_: &StubRequest| {
            let v = answer.load(Ordering::SeqCst) as f64 / 1000.0;
            let now = common::unix_now();
            let vector = format!(
                r#"{{"status":"success","data":{{"resultType":"vector","result":[{{"metric":{{}},"value":[{now},"{v}"]}}]}}}}"#
            );
            (200, vector)
        });
        let stub = HttpStub::start(responder).await.expect("the stand-in");
        StandInPrometheus { stub, value }
    }

    fn set(&self, value: f64) {
        self.value.store((value * 1000.0) as u64, Ordering::SeqCst);
    }

    /// Whether some query it was sent names `needle` (form-encoded bodies
    /// and query strings keep `_`, `-` and letters as they are).
    fn was_asked_about(&self, needle: &str) -> bool {
        let requests = self.stub.requests();
        requests.iter().any(|r| {
            r.target.starts_with("/api/v1/query")
                && (r.body.contains(needle) || r.target.contains(needle))
        })
    }
}

/// `n` requests `<prefix>-<i>` of team `team` into `queue`, answered to `list`.
async fn submit(stage: &mut Stage, (queue, list): (&str, &str), prefix: &str, n: usize) {
    for i in 0..n {
        let id = format!("{prefix}-{i}");
        let payload = serde_json::json!({"model": "m", "prompt": id});
        let mut envelope =
            Envelope::new(&id, common::token(&id), common::unix_now() + 300, payload);
        envelope.data.metadata.insert("team".into(), prefix.into());
        envelope.internal.result_queue_name = list.into();
        common::go_submit_to(&mut stage.conn, queue, &envelope).await;
    }
}

/// Waits for one record per id in `list` and asserts each answered 200.
async fn answered_once_each(stage: &mut Stage, list: &str, n: usize) {
    flow::records_in_within(&mut stage.conn, list, n).await;
    let records = common::records_in(&mut stage.conn, list).await;
    let counts = common::records_per_id(&records);
    assert_eq!(counts.len(), n, "one record each: {counts:?}");
    assert!(
        records.iter().all(|r| r.status_code == Some(200)),
        "{records:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_charts_worker_pools_merge_policy_and_queue_gates_run_a_processor_that_drains_both_queues()
 {
    let Some(mut stage) = Stage::answering_after(Duration::from_millis(5)).await else {
        return;
    };
    // Saturation 0.1: the pool gate's saturation check is open.
    let prometheus = StandInPrometheus::answering(0.9).await;
    let dir = ConfigDir::new("chart-flow");
    for (name, text) in [CHART_WORKER_POOLS, CHART_MERGE_POLICY] {
        dir.write(name, text);
    }
    let swaps = [
        (CHART_CONFIG_DIR, dir.path().to_owned()),
        ("http://igw:80", stage.gateway.base_url()),
        ("http://prometheus:9090", prometheus.stub.url()),
        ("redis:6379", flow::address(&stage.url)),
    ];
    let mut worker = start_as_chart(CHART_FLOW_CONTROL, &swaps, &stage.url);
    let page = worker.metrics_when_up().await;
    // Both pools exist: the batch pool's gate series is created at start.
    let created = flow::pool_decisions(&page, "batch-pool", "gate_closed");
    assert_eq!(created, 0.0, "{page}");

    let results = "result-list";
    submit(&mut stage, ("interactive-sortedset", results), "hi", 10).await;
    submit(&mut stage, ("batch-sortedset", results), "lo", 10).await;
    answered_once_each(&mut stage, results, 20).await;
    let saturation = "inference_extension_flow_control_pool_saturation";
    assert!(
        prometheus.was_asked_about(saturation),
        "the pool gate read no saturation"
    );
    assert!(prometheus.was_asked_about("e2e-pool"));
    worker.stop_within(BOUND).await;
    let log = worker.log();
    for flag in ["--redis.ss.queues-config", "--message-queue-impl"] {
        assert!(
            log.contains(&format!("{flag} is deprecated")),
            "{flag}:\n{log}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_charts_single_queue_gate_holds_the_queue_until_its_query_opens_it() {
    let Some(mut stage) = Stage::answering_after(Duration::from_millis(5)).await else {
        return;
    };
    // The query's budget 0: closed.
    let prometheus = StandInPrometheus::answering(0.0).await;
    let swaps = [
        ("http://igw:80", stage.gateway.base_url()),
        ("http://prometheus:9090", prometheus.stub.url()),
    ];
    let mut worker = start_as_chart(CHART_SINGLE_QUEUE_GATE, &swaps, &stage.url);
    let (queue, results) = ("query-request-sortedset", "query-result-list");
    submit(&mut stage, (queue, results), "q", 3).await;
    let gated = Gated {
        queue_id: queue,
        queue,
        results,
    };
    flow::assert_held(&worker, &mut stage.conn, &stage.gateway, gated, 3).await;
    assert!(prometheus.was_asked_about("inference_extension_flow_control_pool_saturation"));

    prometheus.set(0.9);
    answered_once_each(&mut stage, results, 3).await;
    worker.stop_within(BOUND).await;
}
