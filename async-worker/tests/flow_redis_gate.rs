//! Upstream's `redis-gate.yaml` e2e scenario against the real binary: a queue behind a `redis` gate whose budget an outside controller keeps in `dispatch-gate-budget`, one worker, batches of 10.
//!
//! Budget `0.0` holds the queue (nothing claimed, answered or sent while
//! the gate counts closed polls), `1.0` drains it, and a request the Go
//! producer cancels while held is answered `CANCELLED` once opened.

mod common;

use claim_core::wire::ErrorCode;
use common::flow::{self, BOUND, Gated};
use common::stage::Stage;
use common::worker::Worker;
use redis::AsyncCommands;
use std::time::Duration;

const QUEUE_ID: &str = "redis-gate";
const BUDGET_KEY: &str = "dispatch-gate-budget";

/// The stage and the processor: the default queue behind a `redis` gate
/// on the stage's own server, polled every 100 ms (upstream: 500 ms).
async fn redis_gated() -> Option<(Stage, Worker)> {
    let stage = Stage::answering_after(Duration::from_millis(5)).await?;
    let params = serde_json::json!({"address": flow::address(&stage.url)});
    let config = flow::gated_queue(QUEUE_ID, &stage.gateway, "redis", params);
    #[rustfmt::skip]
    let flags = [
        "--transport-config", &config,
        "--concurrency", "1",
        "--claim-lease-ttl", "3s",
        "--drain-timeout", "5s",
    ];
    let worker = Worker::start_flags(&stage.url, &flags);
    Some((stage, worker))
}

/// [`redis_gated`] at a zero budget, with requests `ids` submitted and held.
async fn held_at_zero(ids: &[&str]) -> Option<(Stage, Worker)> {
    let (mut stage, worker) = redis_gated().await?;
    set_budget(&mut stage, "0.0").await;
    for id in ids {
        submit(&mut stage, id).await;
    }
    assert_held(&mut stage, &worker, ids.len()).await;
    Some((stage, worker))
}

async fn set_budget(stage: &mut Stage, budget: &str) {
    let _: () = stage
        .conn
        .set(BUDGET_KEY, budget)
        .await
        .expect("SET budget");
}

async fn assert_held(stage: &mut Stage, worker: &Worker, pending: usize) {
    let gated = Gated::default_queue(QUEUE_ID);
    flow::assert_held(worker, &mut stage.conn, &stage.gateway, gated, pending).await;
}

async fn submit(stage: &mut Stage, id: &str) {
    let payload = serde_json::json!({"model": "m", "prompt": id});
    common::go_submit(&mut stage.conn, id, common::unix_now() + 300, payload).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_budget_holds_the_queue_and_a_budget_of_one_answers_the_request() {
    let Some((mut stage, mut worker)) = held_at_zero(&["gated-pause"]).await else {
        return;
    };

    set_budget(&mut stage, "1.0").await;
    let record = common::brpop(&stage.url, BOUND).await.expect("a record");
    assert_eq!(record.id, "gated-pause");
    assert_eq!(record.status_code, Some(200), "{record:?}");
    assert_eq!(stage.gateway.calls(), 1);
    worker.stop_within(BOUND).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_requests_held_at_a_zero_budget_are_all_answered_once_it_opens() {
    let ids = ["resume-1", "resume-2", "resume-3"];
    let Some((mut stage, mut worker)) = held_at_zero(&ids).await else {
        return;
    };

    set_budget(&mut stage, "1.0").await;
    flow::records_within(&mut stage.conn, 3).await;
    let records = common::records(&mut stage.conn).await;
    let counts = common::records_per_id(&records);
    let seen: Vec<&str> = counts.keys().map(String::as_str).collect();
    assert_eq!(seen, ids);
    assert!(counts.values().all(|n| *n == 1), "one record each");
    assert!(common::depths(&mut stage.conn).await.nothing_claimed());
    worker.stop_within(BOUND).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_cancelled_while_the_gate_holds_it_is_answered_cancelled_once_it_opens() {
    let id = "producer-cancel-e2e";
    let Some((mut stage, mut worker)) = held_at_zero(&[id]).await else {
        return;
    };
    common::go_cancel(&mut stage.conn, id).await;

    set_budget(&mut stage, "1.0").await;
    let record = common::brpop(&stage.url, BOUND).await.expect("a record");
    assert_eq!(record.id, id);
    assert_eq!(record.error_code, Some(ErrorCode::Cancelled), "{record:?}");
    assert_eq!(record.error_message.as_deref(), Some("cancelled"));
    assert_eq!(record.status_code.unwrap_or(0), 0, "{record:?}");
    assert_eq!(
        stage.gateway.calls(),
        0,
        "a cancelled request is never sent"
    );
    worker.stop_within(BOUND).await;
}
