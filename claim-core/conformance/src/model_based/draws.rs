//! The values the transitions draw: queues, workers, member shapes, deadlines, verdicts, and subsets of what a worker holds.

use super::state::{Held, QUEUES, RefState, Shape, WORKERS};
use super::workload::{Step, Verdict};
use claim_core::types::Generation;
use claim_core::wire::ErrorCode;
use proptest::prelude::*;
use proptest::sample::{select, subsequence};
use std::collections::BTreeMap;

pub(super) fn queue() -> impl Strategy<Value = usize> {
    0..QUEUES.len()
}

/// A step made by `step` from one of `from`.
pub(super) fn one_of<T: Clone + std::fmt::Debug + 'static>(
    from: Vec<T>,
    step: fn(T) -> Step,
) -> BoxedStrategy<Step> {
    select(from).prop_map(step).boxed()
}

pub(super) fn worker() -> impl Strategy<Value = usize> {
    0..WORKERS
}

pub(super) fn shape() -> impl Strategy<Value = Shape> {
    (
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.1),
        any::<bool>(),
        prop::bool::weighted(0.2),
        prop_oneof![
            2 => Just(0i64),
            2 => 1..4i64,
            1 => Just(claim_core::wire::MAX_ENQUEUE_SEQ + 5),
        ],
    )
        .prop_map(
            |(own_list, poison_list, named_queue, unknown_fields, enqueue_seq)| Shape {
                own_list,
                poison_list,
                named_queue,
                unknown_fields,
                enqueue_seq,
            },
        )
}

/// Seconds from now to the deadline: mostly near (some already past), some far.
pub(super) fn deadline_in() -> impl Strategy<Value = i64> {
    prop_oneof![3 => -120i64..=120, 3 => 120i64..=900, 2 => 3_600i64..=86_400]
}

pub(super) fn verdict() -> impl Strategy<Value = Verdict> {
    let codes = [
        ErrorCode::InferenceError,
        ErrorCode::DeadlineExceeded,
        ErrorCode::GateError,
        ErrorCode::InvalidRequest,
    ];
    prop_oneof![3 => Just(Verdict::Success), 1 => select(codes.to_vec()).prop_map(Verdict::Error)]
}

/// A worker with something in `pick(worker)`, and a non-empty subset of it.
pub(super) fn some_of(
    state: &RefState,
    pick: fn(&super::state::Worker) -> &BTreeMap<Generation, Held>,
) -> Option<BoxedStrategy<(usize, Vec<Generation>)>> {
    let choices: Vec<(usize, Vec<Generation>)> = state
        .workers
        .iter()
        .map(|w| (w.index, pick(w).keys().cloned().collect::<Vec<_>>()))
        .filter(|(_, gens)| !gens.is_empty())
        .collect();
    if choices.is_empty() {
        return None;
    }
    let strategy = select(choices).prop_flat_map(|(w, gens)| {
        let most = gens.len().min(4);
        (Just(w), subsequence(gens, 1..=most))
    });
    Some(strategy.boxed())
}
