//! Pool gates and worker pools in the runtime (memory store, paused time): refuse requeues with the retry count kept, wait parks with the claim held until the gate opens, the wait bound or the deadline, an error answers GATE_ERROR, and each pool's workers bound its own queues.

#[path = "common/faulty.rs"]
mod faulty;
mod gate_rig;
#[path = "common/memory_rig.rs"]
mod rig;

use async_worker::gate::GateOwner;
use async_worker::metrics as m;
use async_worker::{BuildError, QueueSpec, Verdict};
use claim_core::ClaimProducer;
use gate_rig::*;
use rig::*;
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn a_refusing_pool_gate_requeues_the_request_which_is_answered_once_the_gate_opens_with_its_retry_count_kept()
 {
    let (gate, (s, handler, token, handle)) =
        asked(Verdict::Refuse, 3, Duration::from_secs(30)).await;
    assert!(
        handler.calls().is_empty(),
        "a refused request is not handled"
    );
    assert!(answered(&s, RESULTS).await.is_empty(), "nor answered");
    let counts = waiting_retry_counts(&s, A).await;
    assert!(counts.iter().all(|c| *c == 0), "{counts:?}");

    gate.open();
    let record = the_record(&s, Duration::from_secs(30)).await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(record["payload"], "answer to ok-1");
    let calls = handler.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].retry_count, 0, "a requeue is not a retry");
    assert!(report.claimed >= 3, "claimed again after each requeue");
    assert_eq!(report.retries, report.claimed - 1, "each requeue is a park");
    assert_eq!(answered(&s, RESULTS).await, ["ok-1"], "one record");
    assert_eq!(depths(&s, A).await, (0, 0));
    assert!(waiting_retry_counts(&s, A).await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_waiting_pool_gate_parks_the_request_with_its_claim_held_until_the_gate_opens() {
    // Asked at most once a second: forty asks outlast the 30 s lease.
    let (gate, (s, handler, token, handle)) =
        asked(Verdict::Wait, 40, Duration::from_secs(90)).await;
    assert_eq!(depths(&s, A).await, (0, 1), "still claimed, renewed");
    assert!(handler.calls().is_empty());
    assert!(answered(&s, RESULTS).await.is_empty());

    gate.open();
    let record = the_record(&s, Duration::from_secs(5)).await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(record["payload"], "answer to ok-1");
    assert_eq!(report.claimed, 1, "never requeued");
    assert_eq!(report.lease_lost, 0);
    assert_eq!(handler.calls().len(), 1);
    assert_eq!(depths(&s, A).await, (0, 0));
}

#[tokio::test(start_paused = true)]
async fn shutdown_returns_a_request_a_waiting_pool_gate_holds_to_pending_unanswered() {
    let (_, (s, handler, token, handle)) = asked(Verdict::Wait, 2, Duration::from_secs(5)).await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(report.swept, 1, "swept back, not answered");
    assert_pending_and_unclaimed(&s, A, 1).await;
    assert!(answered(&s, RESULTS).await.is_empty());
    assert!(handler.calls().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_producer_s_cancel_ends_a_request_a_waiting_pool_gate_holds_cancelled() {
    let (_, (s, handler, token, handle)) = asked(Verdict::Wait, 2, Duration::from_secs(5)).await;
    assert!(s.memory.cancel("ok-1").await.unwrap(), "an active request");
    // The heartbeat (every 10 s of a 30 s lease) reads the cancel markers.
    let record = the_record(&s, Duration::from_secs(20)).await;
    stop_within_bound(token, handle).await;
    assert_eq!(record["error_code"], "CANCELLED", "{record}");
    assert!(handler.calls().is_empty());
    assert_eq!(depths(&s, A).await, (0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_pool_gate_wait_past_the_gate_wait_timeout_requeues_the_request_and_counts_it() {
    // Series of their own: no other test of this binary counts in them.
    const QUEUE: &str = "wait-bound-queue";
    const POOL: &str = "wait-bound-pool";
    // Installed before the runtime registers its series.
    let page = || recorder().render();
    page();
    let gate = SwitchGate::new(1.0, Verdict::Wait);
    let gating = Gating {
        queue: QUEUE,
        pool: POOL,
        wait_bound: Duration::from_secs(5),
        ..Gating::default()
    };
    let (s, handler, token, handle) = one_gated(&gate, gating).await;
    let queue_labels = [("queue_name", QUEUE)];
    assert_eq!(
        sample(&page(), m::GATE_WAIT_REQUEUES, &queue_labels),
        Some(0.0),
        "created at 0"
    );
    within(Duration::from_secs(30), "two requeues", async || {
        sample(&page(), m::GATE_WAIT_REQUEUES, &queue_labels) >= Some(2.0)
    })
    .await;
    assert!(handler.calls().is_empty());
    assert!(
        answered(&s, RESULTS).await.is_empty(),
        "requeued, not answered"
    );
    // A pool gate's decisions are its pool's: the queue labels are empty.
    let pool_labels = [
        ("queue_id", ""),
        ("queue_name", ""),
        ("pool_name", POOL),
        ("reason", "gate_closed"),
    ];
    let closed = sample(&page(), m::GATE_DECISIONS, &pool_labels);
    assert!(closed >= Some(2.0), "one per wait: {closed:?}");

    gate.open();
    let record = the_record(&s, Duration::from_secs(30)).await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(record["payload"], "answer to ok-1");
    assert_eq!(
        handler.calls()[0].retry_count,
        0,
        "a requeue is not a retry"
    );
    assert!(report.claimed >= 3, "claimed again after each requeue");
    assert_eq!(depths(&s, QUEUE).await, (0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_pool_gate_wait_that_outlasts_the_deadline_ends_deadline_exceeded() {
    let gate = SwitchGate::new(1.0, Verdict::Wait);
    let gating = Gating {
        deadline_in_secs: 20,
        ..Gating::default()
    };
    let (s, handler, token, handle) = one_gated(&gate, gating).await;
    let record = the_record(&s, Duration::from_secs(40)).await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(record["error_code"], "DEADLINE_EXCEEDED", "{record}");
    assert_eq!(
        record["error_message"],
        "deadline passed while the pool gate held the request"
    );
    assert!(handler.calls().is_empty());
    assert_eq!(report.claimed, 1, "waited once, never requeued");
    assert_eq!(depths(&s, A).await, (0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_failing_pool_gate_answers_gate_error_with_the_gate_s_message() {
    let gate = SwitchGate::failing("the quota store is down");
    let (s, handler, token, handle) = one_gated(&gate, Gating::default()).await;
    let record = the_record(&s, Duration::from_secs(5)).await;
    stop_within_bound(token, handle).await;
    assert_eq!(record["error_code"], "GATE_ERROR", "{record}");
    assert_eq!(
        record["error_message"],
        "Pool gating error: the quota store is down"
    );
    assert!(handler.calls().is_empty());
    assert_eq!(depths(&s, A).await, (0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_request_its_handler_s_check_refuses_is_answered_before_it_reaches_the_pool_gate() {
    let s = setup();
    submit_due(&s, A, "bad-1", RESULTS, 3600).await;
    let gate = SwitchGate::new(0.0, Verdict::Wait);
    let handler = Tracking::refusing(
        "Failed to validate request for transform: transform g/gcs_uri_multipart: expired",
    );
    let rt = pools_builder(&s, &handler, vec![in_pool(A, DEFAULT)], &[(DEFAULT, 2)])
        .pool_gate(DEFAULT, gate.shared());
    let (token, handle) = start(rt.build().expect("valid runtime settings"));
    let record = the_record(&s, Duration::from_secs(5)).await;
    stop_within_bound(token, handle).await;
    assert_eq!(record["error_code"], "INVALID_REQUEST", "{record}");
    assert!(
        record["error_message"]
            .as_str()
            .unwrap()
            .starts_with("Failed to validate request for transform")
    );
    assert_eq!(
        gate.applies(),
        0,
        "a request that can never be sent takes no gate slot"
    );
    assert!(handler.calls().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_pool_gate_drop_answers_gate_dropped_without_a_record_and_writes_a_record_s_payload_verbatim()
 {
    assert_drops_answered(as_pool_gate).await;
}

#[tokio::test(start_paused = true)]
async fn a_queue_s_static_labels_reach_its_queue_gate_and_its_pool_s_gate() {
    let s = setup();
    submit(&s, A, "ok-1", RESULTS).await;
    let queue_gate = SwitchGate::new(1.0, Verdict::Continue);
    let pool_gate = SwitchGate::new(1.0, Verdict::Continue);
    let handler = Tracking::holding(Duration::ZERO);
    let spec = QueueSpec {
        labels: [("tier".to_owned(), "batch".to_owned())].into(),
        ..QueueSpec::new(A)
    };
    let rt = specs_builder(&s, &handler, vec![spec])
        .queue_gate(A, queue_gate.shared())
        .pool_gate(DEFAULT, pool_gate.shared());
    let (token, handle) = start(rt.build().unwrap());
    records_within(&s, Duration::from_secs(5), "the record", 1).await;
    stop_within_bound(token, handle).await;
    for (gate, seen) in [("queue", &queue_gate), ("pool", &pool_gate)] {
        let labels = seen.labels_seen();
        assert_eq!(labels.len(), 1, "{gate} gate asked once");
        assert_eq!(
            labels[0].get("tier").map(String::as_str),
            Some("batch"),
            "{gate}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_local_max_concurrency_pool_gate_bounds_the_handler_s_calls_at_its_limit_in_either_gating_mode()
 {
    for mode in ["blocking", "classifying"] {
        let s = setup();
        submit_numbered(&s, A, "ok", 10).await;
        let params = serde_json::json!({"limit": "2", "gating_mode": mode});
        let gate = local_max_concurrency(params, &GateOwner::pool(DEFAULT));
        let handler = Tracking::holding(Duration::from_secs(5));
        // Eight workers, two slots.
        let rt = builder(&s, &handler, &[A]).pool_gate(DEFAULT, gate.clone());
        let (token, handle) = start(rt.build().unwrap());
        records_within(&s, Duration::from_secs(120), "every record", 10).await;
        stop_within_bound(token, handle).await;
        assert_eq!(handler.most_at_once(A), 2, "{mode}");
        assert_eq!(answered(&s, RESULTS).await, ids("ok", 10), "{mode}");
        assert_eq!(handler.calls().len(), 10, "{mode}: each handled once");
        assert!(handler.calls().iter().all(|c| c.retry_count == 0), "{mode}");
        within(Duration::from_secs(5), "both slots back", async || {
            gate.budget().await == 1.0
        })
        .await;
    }
}

#[tokio::test(start_paused = true)]
async fn two_pools_of_one_and_three_workers_bound_their_queues_handler_calls_independently() {
    let s = setup();
    submit_numbered(&s, A, "solo", 6).await;
    submit_numbered(&s, B, "trio", 6).await;
    let handler = Tracking::holding(Duration::from_secs(5));
    let specs = vec![in_pool(A, "solo"), in_pool(B, "trio")];
    let rt = pools_builder(&s, &handler, specs, &[("solo", 1), ("trio", 3)]);
    let (token, handle) = start(rt.build().unwrap());
    records_within(&s, Duration::from_secs(60), "every record", 12).await;
    stop_within_bound(token, handle).await;
    assert_eq!(handler.most_at_once(A), 1, "pool solo has one worker");
    assert_eq!(handler.most_at_once(B), 3, "pool trio has three");
    let mut expected = ids("solo", 6);
    expected.extend(ids("trio", 6));
    assert_eq!(answered(&s, RESULTS).await, expected, "one record each");
}

#[tokio::test]
async fn the_builder_refuses_an_unknown_pool_a_duplicate_pool_a_pool_without_workers_and_a_gate_for_nothing()
 {
    let s = setup();
    let handler = Tracking::holding(Duration::ZERO);
    let error = |rt: async_worker::RuntimeBuilder| rt.build().expect_err("refused");
    let pools = |specs, pools| pools_builder(&s, &handler, specs, pools);

    let unknown = error(pools(vec![in_pool(A, "missing")], &[("solo", 1)]));
    assert_eq!(
        unknown,
        BuildError::UnknownPool {
            queue: A.into(),
            pool: "missing".into()
        }
    );
    let unlisted = error(pools(vec![in_pool(A, "solo")], &[]));
    assert_eq!(
        unlisted,
        BuildError::UnknownPool {
            queue: A.into(),
            pool: "solo".into()
        },
        "with no pools listed only default exists"
    );
    let twice = error(pools(vec![in_pool(A, "solo")], &[("solo", 1), ("solo", 2)]));
    assert_eq!(
        twice,
        BuildError::DuplicatePool {
            pool: "solo".into()
        }
    );
    let idle = error(pools(vec![in_pool(A, "solo")], &[("solo", 0)]));
    assert_eq!(
        idle,
        BuildError::PoolWithoutWorkers {
            pool: "solo".into()
        }
    );

    let gate = SwitchGate::new(1.0, Verdict::Continue);
    let queue_gate = error(builder(&s, &handler, &[A]).queue_gate(B, gate.shared()));
    assert_eq!(
        queue_gate,
        BuildError::GateForNothing {
            kind: "queue",
            name: B.into()
        }
    );
    let pool_gate = error(builder(&s, &handler, &[A]).pool_gate("solo", gate.shared()));
    assert_eq!(
        pool_gate,
        BuildError::GateForNothing {
            kind: "pool",
            name: "solo".into()
        }
    );
}
