//! The local-max-concurrency gate's slots: refused or awaited when full, given back exactly once by run, dropped and cancelled paths, and inside a composite chain.

use super::*;
use crate::gate::composite::CompositeGate;
use crate::gate::scripted::{Envelope, build_error, eventually, params};
use futures::FutureExt;
use serde_json::json;
use std::time::Duration;

fn gate(limit: u64, mode: GatingMode) -> Arc<LocalMaxConcurrencyGate> {
    Arc::new(LocalMaxConcurrencyGate::new(limit, mode))
}

/// A composite of `gates`, in order.
fn chain(gates: &[&Arc<LocalMaxConcurrencyGate>]) -> CompositeGate {
    let gates = gates
        .iter()
        .map(|&gate| gate.clone() as Arc<dyn DispatchGate>);
    CompositeGate::new(gates.collect())
}

/// Applies `gate` to a fresh request; the answer and what it reserved.
async fn take(gate: &dyn DispatchGate) -> (Verdict, Releases) {
    let mut releases = Releases::new();
    let answer = gate
        .apply(&mut Envelope::default().request(), &mut releases)
        .await;
    (answer.unwrap(), releases)
}

/// Waits (bounded) until `gate` holds no slot.
async fn drained(gate: &LocalMaxConcurrencyGate) -> bool {
    eventually(async || gate.inflight() == 0).await
}

#[tokio::test]
async fn classifying_refuses_once_every_slot_is_taken_and_leaves_labels_alone() {
    let gate = gate(2, GatingMode::Classifying);
    assert_eq!(gate.budget().await, 1.0);
    let (first, _held_first) = take(&*gate).await;
    assert_eq!(gate.budget().await, 0.5);
    let mut envelope = Envelope::labelled(&[("tier", "batch")]);
    let mut held_second = Releases::new();
    let second = gate.apply(&mut envelope.request(), &mut held_second).await;
    assert_eq!(
        (first, second.unwrap()),
        (Verdict::Continue, Verdict::Continue)
    );
    assert_eq!(gate.budget().await, 0.0);
    let (third, nothing) = take(&*gate).await;
    assert_eq!(third, Verdict::Refuse);
    assert!(nothing.is_empty(), "a refusal reserves nothing");
    assert_eq!(envelope.labels.len(), 1);
}

#[tokio::test]
async fn the_budget_is_the_free_fraction_of_the_limit() {
    let gate = gate(4, GatingMode::Classifying);
    let (_, _held) = take(&*gate).await;
    assert_eq!(gate.budget().await, 0.75);
    assert_eq!(gate.inflight(), 1);
}

#[tokio::test]
async fn running_a_release_frees_its_slot_exactly_once() {
    let gate = gate(2, GatingMode::Classifying);
    let (_, first) = take(&*gate).await;
    let (_, second) = take(&*gate).await;
    first.run().await;
    assert_eq!(gate.inflight(), 1, "only the first slot came back");
    second.run().await;
    assert_eq!(gate.budget().await, 1.0);
    let (_, _a) = take(&*gate).await;
    let (_, _b) = take(&*gate).await;
    assert_eq!(take(&*gate).await.0, Verdict::Refuse, "still two slots");
}

#[tokio::test]
async fn dropping_an_unrun_release_list_frees_its_slot_exactly_once() {
    let gate = gate(1, GatingMode::Classifying);
    let (_, held) = take(&*gate).await;
    drop(held);
    assert!(drained(&gate).await);
    assert_eq!(gate.budget().await, 1.0);
    let (again, _held_again) = take(&*gate).await;
    assert_eq!(again, Verdict::Continue);
    assert_eq!(take(&*gate).await.0, Verdict::Refuse, "still one slot");
}

#[tokio::test]
async fn blocking_waits_for_a_slot_and_gets_the_one_freed() {
    let gate = gate(1, GatingMode::Blocking);
    let (_, held) = take(&*gate).await;
    let ((verdict, waited), ()) = tokio::join!(take(&*gate), held.run());
    assert_eq!(verdict, Verdict::Continue);
    assert_eq!(gate.inflight(), 1);
    waited.run().await;
    assert_eq!(gate.inflight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_blocking_wait_cancelled_at_its_deadline_leaks_no_slot() {
    let gate = gate(1, GatingMode::Blocking);
    let (_, held) = take(&*gate).await;
    let waited = tokio::time::timeout(Duration::from_secs(5), take(&*gate)).await;
    assert!(waited.is_err(), "full: the wait ran into its deadline");
    held.run().await;
    assert_eq!(gate.budget().await, 1.0);
    let next = take(&*gate).now_or_never().map(|(verdict, _)| verdict);
    assert_eq!(next, Some(Verdict::Continue), "the slot is free at once");
}

#[tokio::test]
async fn a_chain_refused_by_a_later_gate_gives_back_the_earlier_gates_slot() {
    let first = gate(2, GatingMode::Classifying);
    let second = gate(1, GatingMode::Classifying);
    let chain = chain(&[&first, &second]);
    let (_, filling_second) = take(&*second).await;
    let (refused, nothing) = take(&chain).await;
    assert_eq!(refused, Verdict::Refuse);
    assert!(nothing.is_empty());
    assert_eq!(first.inflight(), 0, "the first gate's slot came back");
    filling_second.run().await;
    let (passed, both) = take(&chain).await;
    assert_eq!(passed, Verdict::Continue);
    assert_eq!((first.inflight(), second.inflight()), (1, 1));
    both.run().await;
    assert_eq!((first.inflight(), second.inflight()), (0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_chain_cancelled_while_a_later_gate_blocks_gives_back_the_earlier_gates_slot() {
    let first = gate(1, GatingMode::Classifying);
    let second = gate(1, GatingMode::Blocking);
    let chain = chain(&[&first, &second]);
    let (_, _filling_second) = take(&*second).await;
    let waited = tokio::time::timeout(Duration::from_secs(5), take(&chain)).await;
    assert!(waited.is_err());
    assert!(drained(&first).await);
}

#[test]
fn its_params_read_limit_and_mode() {
    let read = |value| {
        let given = params(value);
        LocalMaxConcurrencyGate::from_params(Params::new("local-max-concurrency", &given)).unwrap()
    };
    let gate = read(json!({"limit": "3"}));
    assert_eq!((gate.limit, gate.mode), (3, GatingMode::Classifying));
    let gate = read(json!({"limit": 2, "gating_mode": "blocking"}));
    assert_eq!((gate.limit, gate.mode), (2, GatingMode::Blocking));
    let gate = read(json!({"limit": 2.0, "gating_mode": ""}));
    assert_eq!(gate.mode, GatingMode::Classifying);
    let huge = read(json!({"limit": i64::MAX}));
    assert_eq!(huge.limit, Semaphore::MAX_PERMITS);
}

#[test]
fn its_startup_errors_name_the_param_the_value_and_what_is_accepted() {
    let error = |value| build_error("local-max-concurrency", value);
    let not_positive = "local-max-concurrency limit must be greater than 0, got";
    assert_eq!(error(json!({})), format!("{not_positive} 0"));
    assert_eq!(error(json!({"limit": "0"})), format!("{not_positive} 0"));
    assert_eq!(error(json!({"limit": -3})), format!("{not_positive} -3"));
    assert_eq!(
        error(json!({"limit": "abc"})),
        "local-max-concurrency gate: parameter 'limit' cannot be \"abc\": \
         expected a whole number, or a string holding one"
    );
    assert_eq!(
        error(json!({"limit": 2.5})),
        "local-max-concurrency gate: parameter 'limit' cannot be 2.5: \
         expected a whole number, or a string holding one"
    );
    assert_eq!(
        error(json!({"limit": 1, "gating_mode": "fast"})),
        "local-max-concurrency gating_mode must be either 'blocking' or 'classifying', got \"fast\""
    );
}
