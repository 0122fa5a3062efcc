//! The upstream chart's alerts and dashboard against our `/metrics`: a mixed run of the real binary, two scrapes, every query evaluated by `promtool test rules`.
//!
//! The run (private redis-server, two stand-in gateways, two queues) gives
//! every outcome the chart reads: successes, fatal errors (invalid
//! requests), deadlines passed before dispatch and while retrying, cancels,
//! and 429s that are shed and retried until the deadline. Its proportions
//! make all four alerts fire, so each alert expression returns its series.
//! The exact counts are checked first: they pin how each exit path maps
//! onto the Go processor's counters.
//!
//! Without `promtool` (Debian package `prometheus`) the test skips locally
//! and fails when `CI` is set; `.ci/run` installs it.

mod common;
#[path = "common/promtool.rs"]
mod promtool;

use async_worker::metrics as m;
use async_worker::test_support::gateway::{GatewayBehaviour, StandInGateway};
use async_worker::test_support::metric_sum;
use claim_core::wire::{self, Envelope};
use common::unix_now;
use common::worker::{DRAIN, Worker};
use promtool::{ExprTest, Query};
use redis::aio::MultiplexedConnection;
use std::time::Duration;

/// The namespace a Kubernetes scrape would attach, and the chart's `<ns>`.
const NAMESPACE: &str = "llm-d-async-test";
/// The other labels a PodMonitor scrape attaches.
const POD_LABELS: &str = r#"pod="llm-d-async-ap-0",container="ap",endpoint="metrics",job="llm-d-async-test/llm-d-async-ap",instance="10.0.0.7:9090""#;
/// The scrape interval the two pages stand for.
const SCRAPE_INTERVAL: &str = "30s";
/// Grafana's `$__rate_interval` at that scrape interval (4 × 30 s).
const RATE_INTERVAL: &str = "2m";

const FAST: &str = "fast";
const BUSY: &str = "busy";
/// Requests of each outcome.
const OK: usize = 12;
const EXPIRED: usize = 3;
const INVALID: usize = 2;
const CANCELLED: usize = 1;
/// Requests to the gateway that answers every call 429.
const SHED: usize = 10;
const ALL: usize = OK + EXPIRED + INVALID + CANCELLED + SHED;

fn queries() -> Vec<Query> {
    promtool::load_queries(include_str!("chart_queries.txt"))
}

/// The test of one chart query: a Grafana variable must return our
/// namespace; any other query a finite, non-negative sample.
fn expr_test(query: &Query) -> ExprTest {
    let expr = query
        .expr
        .replace("<ns>", NAMESPACE)
        .replace("$namespace", NAMESPACE)
        .replace("$__rate_interval", RATE_INTERVAL);
    if query.kind != "variable" {
        return ExprTest::finds_series(&expr);
    }
    let (metric, label) = expr
        .strip_prefix("label_values(")
        .and_then(|e| e.strip_suffix(')'))
        .and_then(|e| e.split_once(", "))
        .unwrap_or_else(|| panic!("not label_values(metric, label): {expr}"));
    ExprTest {
        expr: format!("group by ({label}) ({metric})"),
        labels: format!("{{{label}=\"{NAMESPACE}\"}}"),
    }
}

/// Submits as the Go producer does for `queue`, created a second ago;
/// `cancelled` also sets the cancel marker to the request's token.
async fn submit(
    conn: &mut MultiplexedConnection,
    queue: &str,
    id: &str,
    deadline: i64,
    payload: serde_json::Value,
    cancelled: bool,
) {
    let mut envelope = Envelope::new(id, common::token(id), deadline, payload);
    envelope.internal.request_queue_name = queue.to_owned();
    envelope.data.created = unix_now() - 1;
    let token = envelope.internal.request_token.clone();
    let mut pipe = redis::pipe();
    pipe.atomic()
        .cmd("SET")
        .arg(wire::active_key(id))
        .arg(&token)
        .arg("EX")
        .arg((deadline - unix_now()).max(1))
        .ignore();
    if cancelled {
        pipe.cmd("SET")
            .arg(wire::cancel_key(id))
            .arg(&token)
            .arg("EX")
            .arg(wire::CANCEL_MARKER_TTL_SECS)
            .ignore();
    }
    pipe.zadd(queue, envelope.to_bytes(), deadline).ignore();
    pipe.query_async::<()>(conn).await.expect("Go-style submit");
}

/// Every outcome the chart reads, on two queues.
async fn submit_mixed(conn: &mut MultiplexedConnection) {
    let now = unix_now();
    let payload = serde_json::json!({"model": "m", "prompt": "p"});
    let not_an_object = serde_json::json!(["not", "an", "object"]);
    // Per kind: queue, id prefix, how many, deadline, payload, cancelled.
    let kinds = [
        (FAST, "ok", OK, now + 600, &payload, false),
        (FAST, "late", EXPIRED, now - 5, &payload, false),
        (FAST, "bad", INVALID, now + 600, &not_an_object, false),
        (FAST, "gone", CANCELLED, now + 600, &payload, true),
        // Shed (429), retried until the deadline: several attempts each (the
        // first retry is due within 4 s, each later one within the time
        // left), then DEADLINE_EXCEEDED.
        (BUSY, "shed", SHED, now + 12, &payload, false),
    ];
    for (queue, prefix, n, deadline, payload, cancelled) in kinds {
        for i in 0..n {
            let id = format!("{prefix}-{i}");
            submit(conn, queue, &id, deadline, payload.clone(), cancelled).await;
        }
    }
}

/// The first value of `name` whose labels contain `labels`.
fn sample(page: &str, name: &str, labels: &str) -> Option<f64> {
    page.lines()
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with('{'))
        .find(|l| l.contains(labels))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

/// How each exit path of the run was counted, Go's way.
fn assert_counted_as_go_counts(page: &str) {
    let count = |name: &str| metric_sum(page, name);
    assert_eq!(count(m::REQUESTS), ALL as f64, "first attempts:\n{page}");
    assert_eq!(count(m::SUCCESSFUL), OK as f64, "successes:\n{page}");
    assert_eq!(count(m::FAILED), INVALID as f64, "fatal errors:\n{page}");
    let late = (EXPIRED + SHED) as f64;
    assert_eq!(count(m::EXCEEDED_DEADLINE), late, "deadlines:\n{page}");
    assert_eq!(count(m::RESULTS), ALL as f64, "records:\n{page}");
    let cancelled = sample(page, m::RESULTS, r#"code="CANCELLED""#);
    assert_eq!(cancelled, Some(CANCELLED as f64), "cancelled:\n{page}");
    // Each shed request was answered 429 and parked at least once.
    assert!(count(m::SHEDDED) >= SHED as f64, "429s:\n{page}");
    assert!(count(m::RETRIES) >= SHED as f64, "retries:\n{page}");
    let dispatched = count(m::DISPATCHED);
    assert!(dispatched >= count(m::SHEDDED) + OK as f64, "{page}");
    let histogram_count = |name: &str| count(&format!("{name}_count"));
    assert_eq!(histogram_count(m::INFERENCE_LATENCY), dispatched, "{page}");
    assert_eq!(histogram_count(m::QUEUE_RESIDENCE), dispatched, "{page}");
    // Every record of a request with `created` (all but the invalid ones).
    let observed = (ALL - INVALID) as f64;
    assert_eq!(histogram_count(m::MESSAGE_LATENCY), observed, "{page}");
    assert_eq!(count(m::GATE_DECISIONS), 0.0, "{page}");
    for reason in ["gate_closed", "quota_exhausted", "dropped", "error"] {
        for queue in ["fast-q", "busy-q"] {
            let labels = format!(
                r#"queue_id="{queue}",queue_name="{}",pool_name="default",reason="{reason}""#,
                queue.trim_end_matches("-q")
            );
            let value = sample(page, m::GATE_DECISIONS, &labels);
            assert_eq!(value, Some(0.0), "{labels} pre-created at 0:\n{page}");
        }
    }
    assert_eq!(count(m::IN_FLIGHT), 0.0, "{page}");
    assert_eq!(count(m::QUEUE_DEPTH), 0.0, "{page}");
    assert_eq!(count(m::BROKER_BACKLOG_SOURCE_AVAILABLE), 2.0, "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_charts_alerts_and_dashboard_queries_find_their_series_in_the_metrics_of_a_mixed_run() {
    let Some(promtool) = promtool::find_or_skip() else {
        return;
    };
    let Some(server) = common::redis_server() else {
        return;
    };
    let gateway = |throttle_rate| {
        StandInGateway::start(GatewayBehaviour {
            throttle_rate,
            ..GatewayBehaviour::default()
        })
    };
    let fast = gateway(0.0).await.expect("start the fast gateway");
    let busy = gateway(1.0).await.expect("start the throttling gateway");
    let config = serde_json::json!({
        "poll_interval_ms": 100,
        "queues": [
            {"id": "fast-q", "queue_name": FAST, "igw_base_url": fast.base_url()},
            {"id": "busy-q", "queue_name": BUSY, "igw_base_url": busy.base_url()},
        ],
    })
    .to_string();
    let drain = format!("{}s", DRAIN.as_secs());
    let extra = ["--transport-config", config.as_str()];
    let mut worker = Worker::start_with(&server.url(), &fast.base_url(), "5s", &drain, &extra);

    let first = worker.metrics_when_up().await;
    assert_eq!(metric_sum(&first, m::REQUESTS), 0.0, "{first}");
    for queue in ["fast-q", "busy-q"] {
        let labels = format!(r#"queue_id="{queue}""#);
        let created = sample(&first, m::REQUESTS, &labels);
        assert_eq!(created, Some(0.0), "{queue} series at start:\n{first}");
    }
    let mut conn = common::connect(&server.url()).await;
    submit_mixed(&mut conn).await;
    let mut last = String::new();
    common::eventually(
        "every record counted",
        Duration::from_secs(60),
        async || {
            last = worker.metrics().await;
            metric_sum(&last, m::RESULTS) >= ALL as f64
        },
    )
    .await;
    let records: usize = redis::AsyncCommands::llen(&mut conn, wire::DEFAULT_RESULT_LIST)
        .await
        .expect("LLEN");
    assert_eq!(records, ALL, "one record each");
    assert_counted_as_go_counts(&last);

    let kube = format!(r#"namespace="{NAMESPACE}",{POD_LABELS}"#);
    let pages = [
        promtool::samples(&first, &kube),
        promtool::samples(&last, &kube),
    ];
    let queries = queries();
    let tests: Vec<ExprTest> = queries.iter().map(expr_test).collect();
    let file = promtool::test_file(&pages, SCRAPE_INTERVAL, &tests);
    let dir = std::env::temp_dir().join(format!("chart-queries-{}", std::process::id()));
    match promtool::run(&promtool, &dir, &file) {
        Ok(output) => {
            assert!(output.contains("SUCCESS"), "{output}");
            let _ = std::fs::remove_dir_all(&dir);
        }
        Err(output) => {
            let titles: Vec<String> = (queries.iter().zip(&tests))
                .map(|(q, t)| format!("[{}] {}: {}", q.kind, q.title, t.expr))
                .collect();
            panic!(
                "a chart query found no series:\n{output}\nthe queries:\n{}",
                titles.join("\n")
            );
        }
    }

    worker.signal("TERM");
    let status = worker.exit_within(DRAIN + Duration::from_secs(5)).await;
    assert_eq!(status.code(), Some(0), "{}", worker.log_tail());
}

#[test]
fn the_query_file_holds_the_four_alerts_the_namespace_variable_and_every_dashboard_query() {
    let queries = queries();
    let of = |kind: &str| queries.iter().filter(|q| q.kind == kind).count();
    assert_eq!((of("alert"), of("variable"), of("panel")), (4, 1, 13));
    assert_eq!(queries.len(), 18, "{queries:#?}");
}

#[test]
fn a_chart_query_whose_series_is_missing_fails_the_promtool_check() {
    let Some(promtool) = promtool::find_or_skip() else {
        return;
    };
    let kube = format!(r#"namespace="{NAMESPACE}""#);
    let page = |n: u32| {
        let text = format!("{}{{queue_id=\"q\"}} {n}\n", m::REQUESTS);
        promtool::samples(&text, &kube)
    };
    let pages = [page(0), page(5)];
    let rate = format!("sum(rate({}[2m]))", m::REQUESTS);
    let present = [ExprTest::finds_series(&rate)];
    let file = promtool::test_file(&pages, SCRAPE_INTERVAL, &present);
    let dir = std::env::temp_dir().join(format!("chart-queries-ok-{}", std::process::id()));
    promtool::run(&promtool, &dir, &file).expect("a present series passes");
    let missing = [ExprTest::finds_series(
        &rate.replace("request_total", "nothing_total"),
    )];
    let file = promtool::test_file(&pages, SCRAPE_INTERVAL, &missing);
    let dir = std::env::temp_dir().join(format!("chart-queries-missing-{}", std::process::id()));
    let failed = promtool::run(&promtool, &dir, &file);
    assert!(failed.is_err(), "a missing series must fail: {failed:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
