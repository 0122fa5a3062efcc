//! Upstream's `mt-merge.yaml` e2e scenario against the real binary: the `tier-priority` merge policy, pool `default` with one worker, and two team queues labelled `tier: interactive` and `tier: batch`, each behind a classifying `redis-quota` concurrency gate on `team` with limit 1.
//!
//! The lo team's quota is preset full, so its requests are overflow; 20 of
//! them are enqueued before 5 of the hi team. With one worker the record
//! order is the dispatch order, and the interactive queue's requests go
//! first: the last hi answered by index 7, and the final record a lo one.

mod common;

use claim_core::wire::Envelope;
use common::flow::{self, BOUND, ConfigDir};
use common::stage::Stage;
use common::worker::Worker;
use redis::AsyncCommands;
use std::time::Duration;

const HI_QUEUE: &str = "mt-merge-hi-sortedset";
const LO_QUEUE: &str = "mt-merge-lo-sortedset";
const LO: usize = 20;
const HI: usize = 5;

/// One of the scenario's queues: its tier label and its quota gate.
fn queue(id: &str, queue_name: &str, tier: &str, stage: &Stage) -> serde_json::Value {
    serde_json::json!({
        "id": id, "queue_name": queue_name,
        "worker_pool_id": "default",
        "igw_base_url": stage.gateway.base_url(),
        "labels": {"tier": tier},
        "gate_type": "redis-quota",
        "gate_params": {
            "address": flow::address(&stage.url), "attribute": "team",
            "mode": "concurrency", "gating_mode": "classifying", "limit": "1",
        },
    })
}

/// `n` requests of `team` (ids `<team>-<i>`, metadata `team`) into `queue`.
async fn submit_team(stage: &mut Stage, queue: &str, team: &str, n: usize) {
    for i in 0..n {
        let id = format!("{team}-{i}");
        let payload = serde_json::json!({"model": "m", "prompt": "hi", "max_tokens": 64});
        let deadline = common::unix_now() + 300;
        let mut envelope = Envelope::new(&id, common::token(&id), deadline, payload);
        envelope.data.metadata.insert("team".into(), team.into());
        common::go_submit_to(&mut stage.conn, queue, &envelope).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interactive_teams_requests_go_ahead_of_an_earlier_batch_backlog_in_a_one_worker_pool() {
    // Slow enough that the backlog is still waiting when hi arrives.
    let Some(mut stage) = Stage::answering_after(Duration::from_millis(50)).await else {
        return;
    };
    let dir = ConfigDir::new("flow-merge");
    let pools = dir.write("worker-pools.json", r#"[{"id":"default","workers":1}]"#);
    let policy =
        r#"{"type":"tier-priority","parameters":{"priority_header":"x-gateway-priority"}}"#;
    let policy = dir.write("request-merge-policy.json", policy);
    let config = serde_json::json!({
        "poll_interval_ms": 100,
        "batch_size": 10,
        "queues": [
            queue("mt-merge-hi", HI_QUEUE, "interactive", &stage),
            queue("mt-merge-lo", LO_QUEUE, "batch", &stage),
        ],
    })
    .to_string();
    #[rustfmt::skip]
    let flags = [
        "--transport-config", &config,
        "--pool-config-file", &pools,
        "--request-merge-policy-config-file", &policy,
        "--claim-lease-ttl", "5s",
        "--drain-timeout", "5s",
    ];
    let mut worker = Worker::start_flags(&stage.url, &flags);
    worker.metrics_when_up().await;

    // The lo team at its limit: every lo request classifies as overflow.
    let _: () = stage.conn.set_ex("quota:team:lo", "1", 300).await.unwrap();
    submit_team(&mut stage, LO_QUEUE, "lo", LO).await;
    submit_team(&mut stage, HI_QUEUE, "hi", HI).await;

    flow::records_within(&mut stage.conn, LO + HI).await;
    let records = common::records(&mut stage.conn).await;
    let order: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
    let counts = common::records_per_id(&records);
    assert_eq!(counts.len(), LO + HI, "one record each: {order:?}");
    assert!(records.iter().all(|r| r.status_code == Some(200)));
    let last_hi = order.iter().rposition(|id| id.starts_with("hi-"));
    assert!(last_hi.is_some_and(|i| i <= HI + 2), "{order:?}");
    assert!(order[LO + HI - 1].starts_with("lo-"), "{order:?}");

    // Overflow never reserves; every hi reservation is given back.
    let lo: String = stage.conn.get("quota:team:lo").await.unwrap();
    assert_eq!(lo, "1");
    common::eventually("the hi team's slot released", BOUND, async || {
        let hi: Option<String> = stage.conn.get("quota:team:hi").await.unwrap();
        hi.is_none_or(|n| n == "0")
    })
    .await;
    worker.stop_within(BOUND).await;
}
