//! Queue gates in the runtime (memory store, paused time): the budget scales each poll's claims, refused, waiting and failed members stay pending with no write, a drop answers without the handler, and a local-max-concurrency gate's slots come back however a claim ends.

#[path = "common/faulty.rs"]
mod faulty;
mod gate_rig;
#[path = "common/memory_rig.rs"]
mod rig;

use async_worker::gate::GateOwner;
use async_worker::metrics as m;
use async_worker::{RunReport, Verdict};
use claim_core::{ClaimAdmin, Generation};
use gate_rig::*;
use rig::*;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Starts the runtime over `queue` behind queue gate `gate`; the handler's
/// requests need not take time.
fn start_quick(
    s: &Setup,
    queue: &str,
    gate: &Arc<SwitchGate>,
) -> (Arc<Tracking>, CancellationToken, JoinHandle<RunReport>) {
    let handler = Tracking::holding(Duration::ZERO);
    let rt = builder(s, &handler, &[queue]).queue_gate(queue, gate.shared());
    let (token, handle) = start(rt.build().unwrap());
    (handler, token, handle)
}

#[tokio::test(start_paused = true)]
async fn a_closed_queue_gate_claims_nothing_and_once_opened_drains_the_queue_with_one_record_per_request()
 {
    let s = setup();
    submit_numbered(&s, A, "ok", 5).await;
    let gate = SwitchGate::new(0.0, Verdict::Continue);
    let (handler, token, handle) = start_quick(&s, A, &gate);
    within(Duration::from_secs(5), "three closed polls", async || {
        gate.polls() >= 3
    })
    .await;
    assert_eq!(gate.applies(), 0, "a closed gate is asked about no member");
    assert_eq!(claim_calls(&s), 0, "nothing was claimed");
    assert_pending_and_unclaimed(&s, A, 5).await;
    assert!(answered(&s, RESULTS).await.is_empty());

    gate.open();
    records_within(&s, Duration::from_secs(10), "every record", 5).await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(answered(&s, RESULTS).await, ids("ok", 5), "one record each");
    assert_eq!(report.claimed, 5);
    assert_eq!(report.records_pushed, 5);
    assert_eq!(handler.calls().len(), 5);
    assert_pending_and_unclaimed(&s, A, 0).await;
}

#[tokio::test(start_paused = true)]
async fn a_partial_budget_claims_at_most_floor_of_batch_times_budget_per_poll_and_publishes_it() {
    // Series of its own: no other test of this binary counts in them.
    const QUEUE: &str = "partial-budget-queue";
    // Installed before the runtime registers its series.
    recorder();
    let s = setup();
    submit_numbered(&s, QUEUE, "ok", 20).await;
    // Batches of 10 at 0.35: floor(3.5) = 3 a poll.
    let gate = SwitchGate::new(0.35, Verdict::Continue);
    let (_, token, handle) = start_quick(&s, QUEUE, &gate);
    records_within(&s, Duration::from_secs(30), "every record", 20).await;
    let report = stop_within_bound(token, handle).await;
    let per_poll = gate.applies_per_poll();
    assert!(per_poll.iter().all(|n| *n <= 3), "{per_poll:?}");
    assert_eq!(per_poll.iter().max(), Some(&3), "{per_poll:?}");
    assert_eq!(
        answered(&s, RESULTS).await,
        ids("ok", 20),
        "one record each"
    );
    assert_eq!(report.claimed, 20);
    let page = recorder().render();
    let budget = sample(&page, m::DISPATCH_BUDGET, &[("queue_name", QUEUE)]);
    assert_eq!(budget, Some(0.35), "{page}");
}

/// Submits one request behind a queue gate answering `gate`'s way, checks
/// that several polls leave it pending, unclaimed and unwritten, then opens
/// the gate and checks it is answered once.
async fn held_back_until_opened(gate: Arc<SwitchGate>) {
    let s = setup();
    submit(&s, A, "ok-1", RESULTS).await;
    let (handler, token, handle) = start_quick(&s, A, &gate);
    within(Duration::from_secs(5), "three decisions", async || {
        gate.applies() >= 3
    })
    .await;
    assert_pending_and_unclaimed(&s, A, 1).await;
    assert_eq!(claim_calls(&s), 0, "never claimed");
    assert_eq!(acks_offered(&s), 0, "nothing written");
    assert!(answered(&s, RESULTS).await.is_empty());
    assert!(handler.calls().is_empty());

    gate.open();
    records_within(&s, Duration::from_secs(5), "the record", 1).await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(answered(&s, RESULTS).await, ["ok-1"]);
    assert_eq!(report.claimed, 1);
    assert_pending_and_unclaimed(&s, A, 0).await;
}

#[tokio::test(start_paused = true)]
async fn a_refusing_queue_gate_leaves_the_member_pending_unclaimed_and_unwritten() {
    held_back_until_opened(SwitchGate::new(1.0, Verdict::Refuse)).await;
}

#[tokio::test(start_paused = true)]
async fn a_waiting_queue_gate_leaves_the_member_pending_unclaimed_and_unwritten() {
    held_back_until_opened(SwitchGate::new(1.0, Verdict::Wait)).await;
}

#[tokio::test(start_paused = true)]
async fn a_failing_queue_gate_leaves_the_member_pending_unclaimed_and_unwritten() {
    held_back_until_opened(SwitchGate::failing("the quota store is down")).await;
}

#[tokio::test(start_paused = true)]
async fn a_queue_gate_drop_answers_gate_dropped_without_a_record_and_writes_a_record_s_payload_verbatim()
 {
    assert_drops_answered(as_queue_gate).await;
}

/// A classifying `local-max-concurrency` queue gate of one slot on [`A`].
fn one_slot() -> Arc<dyn async_worker::DispatchGate> {
    let owner = GateOwner::queue(A, A, "default");
    local_max_concurrency(serde_json::json!({"limit": "1"}), &owner)
}

/// Runs three requests on [`A`] behind the one-slot `gate`, each held 5 s,
/// and checks, once `meanwhile` has run while they are served, that they
/// were answered one at a time within `bound` and the slot came back.
async fn served_one_at_a_time(
    gate: &Arc<dyn async_worker::DispatchGate>,
    bound: Duration,
    meanwhile: impl AsyncFnOnce(&Setup),
) {
    let s = setup();
    submit_numbered(&s, A, "ok", 3).await;
    let handler = Tracking::holding(Duration::from_secs(5));
    let rt = builder(&s, &handler, &[A]).queue_gate(A, gate.clone());
    let (token, handle) = start(rt.build().unwrap());
    meanwhile(&s).await;
    records_within(&s, bound, "every record", 3).await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(
        handler.most_at_once(A),
        1,
        "one slot, one request at a time"
    );
    assert_eq!(answered(&s, RESULTS).await, ids("ok", 3), "one record each");
    assert_eq!(report.claimed, 3);
    budget_within(gate, 1.0, "the slot back").await;
}

/// Waits (paused time) until `gate`'s budget reads `budget`.
async fn budget_within(gate: &Arc<dyn async_worker::DispatchGate>, budget: f64, what: &str) {
    within(Duration::from_secs(5), what, async || {
        gate.budget().await == budget
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_local_max_concurrency_queue_gate_gives_its_slot_back_when_each_record_lands() {
    let gate = one_slot();
    served_one_at_a_time(&gate, Duration::from_secs(30), async |s| {
        budget_within(&gate, 0.0, "the slot taken").await;
        assert_eq!(depths(s, A).await, (2, 1), "one claimed, the rest pending");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_local_max_concurrency_queue_gate_gives_its_slot_back_after_a_lost_lease_and_after_the_shutdown_sweep()
 {
    let s = setup();
    submit(&s, A, "hang-1", RESULTS).await;
    let gate = one_slot();
    // Held longer than the test runs: only a stop ends a call.
    let handler = Tracking::holding(Duration::from_secs(3600));
    let rt = builder(&s, &handler, &[A]).queue_gate(A, gate.clone());
    let (token, handle) = start(rt.build().unwrap());
    within(Duration::from_secs(5), "the first call", async || {
        handler.calls().len() == 1
    })
    .await;
    assert_eq!(gate.budget().await, 0.0, "the one slot is taken");

    // An operator takes the claim away: the next renewal finds it lost. The
    // member is pending again, and only a slot given back lets it be
    // claimed and handled a second time.
    let generation = Generation::new("hang-1", "tok-hang-1");
    s.memory.release_claim(A, &generation).await.unwrap();
    within(Duration::from_secs(30), "the second call", async || {
        handler.calls().len() == 2
    })
    .await;
    assert_eq!(gate.budget().await, 0.0, "the second claim holds the slot");

    let report = stop_within_bound(token, handle).await;
    assert_eq!(report.lease_lost, 1);
    assert_eq!(report.swept, 1, "shutdown returns the second claim");
    assert_pending_and_unclaimed(&s, A, 1).await;
    assert!(answered(&s, RESULTS).await.is_empty());
    budget_within(&gate, 1.0, "the slot back after the sweep").await;
}

#[tokio::test(start_paused = true)]
async fn a_blocking_local_max_concurrency_queue_gate_serves_its_queue_one_request_at_a_time() {
    let owner = GateOwner::queue(A, A, "default");
    let params = serde_json::json!({"limit": "1", "gating_mode": "blocking"});
    let gate = local_max_concurrency(params, &owner);
    served_one_at_a_time(&gate, Duration::from_secs(60), async |_| {}).await;
}
