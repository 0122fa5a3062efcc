//! The sampled gauges an operator watches a backlog by, read off a real processor's `/metrics`: the age of the head of pending, the dead set's and the retry set's sizes, the build info and the process's own `process_*` figures.

mod common;

use async_worker::metrics as m;
use async_worker::test_support::gateway::{GatewayBehaviour, StandInGateway};
use async_worker::test_support::metric_sum;
use claim_core::wire::{self, Envelope};
use common::admin::admin;
use common::worker::{DRAIN, Worker, has_sample};
use redis::AsyncCommands;
use std::time::Duration;

/// How old the waiting request is when it is submitted.
const AGE_S: i64 = 300;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_queue_reports_the_age_of_its_head_and_its_dead_and_retry_sets_and_the_process_reports_itself()
 {
    let Some(server) = common::redis_server() else {
        return;
    };
    let mut conn = common::connect(&server.url()).await;
    // Paused, so the request stays at the head of pending.
    assert_eq!(admin(&server.url(), &["pause", common::QUEUE]).code, 0);
    let payload = serde_json::json!({"model": "m", "prompt": "p"});
    let deadline = common::unix_now() + 3600;
    let mut envelope = Envelope::new("old", common::token("old"), deadline, payload);
    envelope.data.created = common::unix_now() - AGE_S;
    common::go_submit_envelope(&mut conn, &envelope).await;
    let dead = format!("{}:dead", common::QUEUE);
    let _: () = conn.hset(&dead, "a", "x").await.unwrap();
    let _: () = conn.hset(&dead, "b", "y").await.unwrap();
    let parked = r#"{"data":{"id":"later","deadline":1}}"#;
    let due = common::unix_now() + 3600;
    let _: () = conn
        .zadd(wire::DEFAULT_RETRY_SET, parked, due)
        .await
        .unwrap();

    let gateway = StandInGateway::start(GatewayBehaviour::answering_after(Duration::ZERO))
        .await
        .expect("start the gateway");
    let drain = format!("{}s", DRAIN.as_secs());
    #[rustfmt::skip]
    let sampled = ["--metrics-backlog-poll-interval", "200ms"];
    let mut worker = Worker::start_with(&server.url(), &gateway.base_url(), "5s", &drain, &sampled);
    worker.metrics_when_up().await;
    let mut page = String::new();
    common::eventually("the gauges sampled", Duration::from_secs(15), async || {
        page = worker.metrics().await;
        metric_sum(&page, m::OLDEST_PENDING_AGE) > 0.0
    })
    .await;
    let age = metric_sum(&page, m::OLDEST_PENDING_AGE);
    assert!(
        (AGE_S as f64..AGE_S as f64 + 60.0).contains(&age),
        "the head's age from its created: {age}"
    );
    assert_eq!(metric_sum(&page, m::DEAD_DEPTH), 2.0, "{page}");
    assert_eq!(metric_sum(&page, m::RETRY_DEPTH), 1.0, "{page}");
    let version = format!(
        "{}{{version=\"{}\"}} 1",
        m::BUILD_INFO,
        env!("CARGO_PKG_VERSION")
    );
    assert!(page.contains(&version), "{version} in:\n{page}");
    for process in [
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_threads",
        "process_start_time_seconds",
    ] {
        assert!(has_sample(&page, process), "{process} in:\n{page}");
    }
    assert_eq!(gateway.calls(), 0, "nothing claimed while paused");

    // Resumed, the request is served and the head's age falls back to 0.
    assert_eq!(admin(&server.url(), &["resume", common::QUEUE]).code, 0);
    common::eventually(
        "an empty queue's age 0",
        Duration::from_secs(15),
        async || metric_sum(&worker.metrics().await, m::OLDEST_PENDING_AGE) == 0.0,
    )
    .await;
    worker.signal("TERM");
    let status = worker.exit_within(DRAIN + Duration::from_secs(5)).await;
    assert_eq!(status.code(), Some(0), "{}", worker.log_tail());
}
