//! The real `async-worker` binary against a private redis-server and a stand-in gateway: SIGTERM drains, SIGKILL is redelivered, /metrics, bad flags.
//!
//! Processes get short leases and the tests poll Redis (with a bound) for the
//! state they wait for. Every request is accounted for at the end: exactly
//! one record in `result-list`, or (after a SIGTERM) back in pending; never
//! left claimed, never lost.

mod common;

use async_worker::test_support::gateway::{GatewayBehaviour, StandInGateway};
use async_worker::test_support::metric_sum;
use claim_core::ClaimInspect;
use claim_core::store::StoreConfig;
use claim_redis::testing::RedisServer;
use claim_redis::{RedisStore, RedisStoreOptions};
use common::worker::{BINARY, DRAIN, Worker, has_sample};
use common::{Depths, QUEUE};
use redis::aio::MultiplexedConnection;
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Slack on top of the drain timeout for the exit itself and the flush.
const EXIT_MARGIN: Duration = Duration::from_secs(5);

/// The pending members with their scores.
async fn scored_pending(conn: &mut MultiplexedConnection) -> Vec<(Vec<u8>, f64)> {
    redis::AsyncCommands::zrange_withscores(conn, QUEUE, 0, -1)
        .await
        .expect("ZRANGE WITHSCORES")
}

async fn gateway(min_ms: u64, max_ms: u64) -> StandInGateway {
    StandInGateway::start(GatewayBehaviour {
        min_latency: Duration::from_millis(min_ms),
        max_latency: Duration::from_millis(max_ms),
        ..GatewayBehaviour::default()
    })
    .await
    .expect("start the stand-in gateway")
}

/// Waits (polling, within `bound`) until the key sizes satisfy `done`.
async fn depths_until(
    conn: &MultiplexedConnection,
    what: &str,
    bound: Duration,
    done: impl Fn(Depths) -> bool,
) {
    let mut watch = conn.clone();
    common::eventually(what, bound, async || done(common::depths(&mut watch).await)).await;
}

/// Waits (polling) until the result list holds `n` records; on failure
/// says where the requests are.
async fn wait_for_records(conn: &MultiplexedConnection, n: usize, bound: Duration) {
    let mut conn = conn.clone();
    let started = Instant::now();
    loop {
        let d = common::depths(&mut conn).await;
        if d.results >= n {
            return;
        }
        assert!(
            started.elapsed() < bound,
            "timed out after {bound:?} waiting for {n} records: {d:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A private Redis with `n` numbered requests submitted the Go way, a
/// connection to it, the request ids and a stand-in gateway answering in
/// `min_ms..max_ms`; `None` when redis-server is missing.
async fn submitted(
    n: usize,
    min_ms: u64,
    max_ms: u64,
) -> Option<(
    RedisServer,
    MultiplexedConnection,
    BTreeSet<String>,
    StandInGateway,
)> {
    let server = common::redis_server()?;
    let gateway = gateway(min_ms, max_ms).await;
    let mut conn = common::connect(&server.url()).await;
    let ids = common::go_submit_numbered(&mut conn, n).await;
    Some((server, conn, ids, gateway))
}

/// Sends SIGTERM and waits up to `drain` plus the exit margin for exit code
/// 0; returns how long the exit took after the signal.
async fn sigterm_exits_0(worker: &mut Worker, drain: Duration) -> Duration {
    worker.signal("TERM");
    let signalled = Instant::now();
    let status = worker.exit_within(drain + EXIT_MARGIN).await;
    let took = signalled.elapsed();
    assert_eq!(status.code(), Some(0), "log tail:\n{}", worker.log_tail());
    took
}

/// SIGTERM with the standard drain, exit 0, then exactly one record per request.
async fn sigterm_then_one_record_each(
    worker: &mut Worker,
    conn: &mut MultiplexedConnection,
    ids: &BTreeSet<String>,
) {
    sigterm_exits_0(worker, DRAIN).await;
    assert_exactly_one_record_each(conn, ids).await;
}

/// A fresh process answers every request within `bound`, then stops cleanly
/// leaving exactly one record each.
async fn a_second_process_finishes(
    server: &RedisServer,
    gateway: &StandInGateway,
    conn: &mut MultiplexedConnection,
    ids: &BTreeSet<String>,
    bound: Duration,
) {
    let mut second = Worker::start(&server.url(), &gateway.base_url(), "3s");
    wait_for_records(conn, ids.len(), bound).await;
    sigterm_then_one_record_each(&mut second, conn, ids).await;
}

/// Every request has exactly one record and nothing else is left.
async fn assert_exactly_one_record_each(conn: &mut MultiplexedConnection, ids: &BTreeSet<String>) {
    let records = common::records(conn).await;
    let counts = common::records_per_id(&records);
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "requests with several records: {twice:?}");
    let answered: BTreeSet<String> = counts.into_keys().collect();
    assert_eq!(&answered, ids, "every request has a record, and only those");
    assert!(
        records.iter().all(|r| r.status_code == Some(200)),
        "every record is the gateway's answer"
    );
    assert_eq!(
        common::depths(conn).await,
        Depths {
            results: ids.len(),
            ..Depths::default()
        },
        "nothing pending, claimed, parked or dead"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_run_exits_0_within_the_drain_timeout_losing_nothing_and_a_second_process_finishes()
 {
    let Some((server, mut conn, ids, gateway)) = submitted(300, 50, 150).await else {
        return;
    };

    let mut first = Worker::start(&server.url(), &gateway.base_url(), "3s");
    depths_until(
        &conn,
        "some records while work is in flight",
        Duration::from_secs(30),
        |d| d.results >= 30 && d.owners > 0,
    )
    .await;
    let took = sigterm_exits_0(&mut first, DRAIN).await;
    assert!(took <= DRAIN + EXIT_MARGIN, "exited after {took:?}");

    // Nothing claimed, nothing lost: each request has one record or is pending.
    let d = common::depths(&mut conn).await;
    assert!(d.nothing_claimed(), "claims left after the drain: {d:?}");
    assert_eq!((d.retry, d.dead), (0, 0));
    let records = common::records(&mut conn).await;
    let counts = common::records_per_id(&records);
    assert!(
        counts.values().all(|n| *n == 1),
        "a request got two records"
    );
    let answered: BTreeSet<String> = counts.into_keys().collect();
    let pending: BTreeSet<String> = common::member_ids(&mut conn, QUEUE)
        .await
        .into_iter()
        .collect();
    assert!(
        answered.is_disjoint(&pending),
        "answered requests are not pending again"
    );
    let accounted: BTreeSet<String> = answered.union(&pending).cloned().collect();
    assert_eq!(accounted, ids, "every request is answered or pending");
    eprintln!(
        "after SIGTERM: {} answered, {} pending",
        answered.len(),
        pending.len()
    );

    a_second_process_finishes(&server, &gateway, &mut conn, &ids, Duration::from_secs(60)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_work_outlasting_the_drain_timeout_sweeps_it_back_to_pending_at_its_deadline_and_exits_0()
 {
    let Some((server, mut conn, ids, slow)) = submitted(20, 2_000, 2_500).await else {
        return;
    };
    let before = scored_pending(&mut conn).await;

    let drain = Duration::from_millis(500);
    let mut worker = Worker::start_draining(&server.url(), &slow.base_url(), "3s", "500ms");
    depths_until(
        &conn,
        "16 requests in flight",
        Duration::from_secs(10),
        |d| d.owners == 16,
    )
    .await;
    assert!(sigterm_exits_0(&mut worker, drain).await <= drain + EXIT_MARGIN);
    assert_eq!(
        common::depths(&mut conn).await,
        Depths {
            pending: ids.len(),
            ..Depths::default()
        },
        "the in-flight requests are swept back: all pending, none claimed, no record"
    );
    assert_eq!(
        scored_pending(&mut conn).await,
        before,
        "the same members at their deadline scores"
    );

    let fast = gateway(1, 10).await;
    a_second_process_finishes(&server, &fast, &mut conn, &ids, Duration::from_secs(30)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_of_one_of_two_processes_is_redelivered_by_the_survivor_and_every_request_gets_one_record()
 {
    let Some((server, mut conn, ids, gateway)) = submitted(300, 100, 300).await else {
        return;
    };
    let inspector =
        RedisStore::connect(RedisStoreOptions::new(server.url(), StoreConfig::default()))
            .await
            .expect("connect an inspecting store");

    let mut doomed = Worker::start(&server.url(), &gateway.base_url(), "3s");
    let mut survivor = Worker::start(&server.url(), &gateway.base_url(), "3s");
    let mut watch = conn.clone();
    common::eventually(
        "records, and claims held by both processes",
        Duration::from_secs(30),
        async || {
            let claims = inspector.claims(QUEUE).await.unwrap();
            let owners: BTreeSet<_> = claims.iter().map(|c| c.owner.clone()).collect();
            owners.len() == 2 && common::depths(&mut watch).await.results >= 30
        },
    )
    .await;
    doomed.signal("KILL");
    let status = doomed.exit_within(Duration::from_secs(5)).await;
    assert_eq!(status.code(), None, "killed by a signal");

    wait_for_records(&conn, ids.len(), Duration::from_secs(60)).await;
    let page = survivor.metrics().await;
    assert!(
        metric_sum(&page, "async_claims_expired_total") >= 1.0,
        "the survivor reclaimed the killed process's expired claims:\n{page}"
    );
    sigterm_then_one_record_each(&mut survivor, &mut conn, &ids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_run_the_metrics_endpoint_shows_the_spec_metric_names() {
    let Some((server, mut conn, ids, gateway)) = submitted(50, 1, 10).await else {
        return;
    };
    let mut worker = Worker::start(&server.url(), &gateway.base_url(), "3s");
    wait_for_records(&conn, ids.len(), Duration::from_secs(30)).await;
    let page = worker.metrics_when_up().await;
    for name in [
        "async_claim_depth",
        "async_claims_expired_total",
        "async_duplicate_results_suppressed_total",
        "async_pending_duplicates_dropped_total",
        "async_retried_acks_landed_total",
        "async_store_out_of_memory",
    ] {
        assert!(
            has_sample(&page, name),
            "{name} is not on /metrics:\n{page}"
        );
    }
    sigterm_then_one_record_each(&mut worker, &mut conn, &ids).await;
}

/// Runs the binary with `args` (no Redis needed: it must refuse first).
fn refused(args: &[&str]) -> String {
    let output = Command::new(BINARY)
        .args(args)
        .env_remove("REDIS_URL")
        .stdin(Stdio::null())
        .output()
        .expect("run async-worker");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    stderr
}

/// [`refused`] with a lease flag of `ttl` and otherwise valid flags.
fn refused_lease(ttl: &str) -> String {
    refused(&[
        "--redis-url",
        NO_REDIS,
        "--igw-base-url",
        NO_GATEWAY,
        "--claim-lease-ttl",
        ttl,
    ])
}

/// [`refused`] with `config` as the transport config.
fn refused_config(config: serde_json::Value) -> String {
    refused(&["--transport-config", &config.to_string()])
}

const NO_REDIS: &str = "redis://127.0.0.1:1";
const NO_GATEWAY: &str = "http://127.0.0.1:1";

#[test]
fn a_negative_lease_flag_exits_2_with_one_line_naming_the_flag() {
    let stderr = refused_lease("-5s");
    assert!(stderr.contains("--claim-lease-ttl"), "{stderr}");
}

#[test]
fn an_unknown_transport_config_field_under_strict_config_exits_2_with_one_line_naming_the_field() {
    let config = serde_json::json!({
        "url": NO_REDIS,
        "queues": [{"queue_name": "q", "igw_base_url": NO_GATEWAY, "bogus_knob": 1}],
    });
    let stderr = refused(&["--strict-config", "--transport-config", &config.to_string()]);
    assert!(stderr.contains("queues[0].bogus_knob"), "{stderr}");
}

#[test]
fn a_go_flag_this_version_cannot_honour_exits_2_with_one_line_naming_it() {
    let stderr = refused(&[
        "--redis-url",
        NO_REDIS,
        "--igw-base-url",
        NO_GATEWAY,
        "--metrics-endpoint-auth=true",
    ]);
    assert!(stderr.contains("--metrics-endpoint-auth=true"), "{stderr}");
}

#[test]
fn a_queue_without_igw_base_url_exits_2_with_one_line_naming_the_field() {
    let stderr =
        refused_config(serde_json::json!({"url": NO_REDIS, "queues": [{"queue_name": "q"}]}));
    assert!(stderr.contains("igw_base_url"), "{stderr}");
}

#[test]
fn a_result_list_named_like_the_queue_exits_2_with_one_line_naming_both() {
    let stderr = refused_config(serde_json::json!({
        "url": NO_REDIS,
        "result_queue_name": "q",
        "queues": [{"queue_name": "q", "igw_base_url": NO_GATEWAY}],
    }));
    assert!(stderr.contains("result list \"q\""), "{stderr}");
}

#[test]
fn a_lease_under_three_seconds_exits_2_with_one_line_naming_the_flag() {
    let stderr = refused_lease("2s");
    assert!(stderr.contains("--claim-lease-ttl"), "{stderr}");
}
