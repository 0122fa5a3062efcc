//! The transitions, generated from the reference state so that most of them mean something.

use super::draws::{deadline_in, one_of, queue, shape, some_of, verdict, worker};
use super::state::RefState;
use super::step;
use super::workload::Step;
use claim_core::types::Generation;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::Union;
use proptest_state_machine::ReferenceStateMachine;

/// The reference state machine.
#[derive(Debug, Clone, Copy)]
pub struct Machine;

impl ReferenceStateMachine for Machine {
    type State = RefState;
    type Transition = Step;

    fn init_state() -> BoxedStrategy<RefState> {
        // 0 = unlimited deliveries; small limits make DELIVERY_LIMIT reachable.
        prop_oneof![1 => Just(0u32), 1 => Just(1u32), 3 => 2u32..=4]
            .prop_map(RefState::new)
            .boxed()
    }

    fn transitions(state: &RefState) -> BoxedStrategy<Step> {
        let mut options: Vec<(u32, BoxedStrategy<Step>)> = vec![
            (
                10,
                (queue(), deadline_in(), shape())
                    .prop_map(|(queue, deadline_in, shape)| Step::Submit {
                        queue,
                        deadline_in,
                        shape,
                    })
                    .boxed(),
            ),
            (
                1,
                (queue(), any::<u8>())
                    .prop_map(|(queue, kind)| Step::SubmitGarbage { queue, kind })
                    .boxed(),
            ),
            (
                8,
                (
                    worker(),
                    queue(),
                    prop_oneof![4 => Just(0usize), 1 => 1usize..4],
                    1usize..6,
                )
                    .prop_map(|(worker, queue, offset, limit)| Step::Claim {
                        worker,
                        queue,
                        offset,
                        limit,
                    })
                    .boxed(),
            ),
            (
                1,
                (worker(), queue(), 1usize..6)
                    .prop_map(|(worker, queue, limit)| Step::Peek {
                        worker,
                        queue,
                        limit,
                    })
                    .boxed(),
            ),
            (
                2,
                worker().prop_map(|worker| Step::Crash { worker }).boxed(),
            ),
            (
                2,
                (1usize..5)
                    .prop_map(|limit| Step::Promote { limit })
                    .boxed(),
            ),
            (
                8,
                (queue(), 1usize..4)
                    .prop_map(|(queue, limit)| Step::Reclaim { queue, limit })
                    .boxed(),
            ),
            (2, (0u64..=10_000).prop_map(|ms| Step::Stall { ms }).boxed()),
            (
                6,
                prop_oneof![2 => 0u64..=5_000, 2 => 5_000u64..=25_000, 3 => 30_000u64..=90_000]
                    .prop_map(|ms| Step::Tick { ms })
                    .boxed(),
            ),
        ];
        let submitted: Vec<Generation> = state.generations.keys().cloned().collect();
        if !submitted.is_empty() {
            let of = select(submitted.clone());
            options.push((
                2,
                (of, queue(), deadline_in(), shape())
                    .prop_map(|(of, queue, deadline_in, shape)| Step::Resubmit {
                        of,
                        queue,
                        deadline_in,
                        shape,
                    })
                    .boxed(),
            ));
            options.push((
                1,
                one_of(submitted.clone(), |generation| Step::SubmitAgain {
                    generation,
                }),
            ));
            options.push((
                2,
                one_of(submitted, |generation| Step::Cancel { generation }),
            ));
        }
        if state.workers.iter().any(|w| !w.peeked.is_empty()) {
            options.push((
                2,
                worker()
                    .prop_map(|worker| Step::ClaimPeeked { worker })
                    .boxed(),
            ));
        }
        let holding: Vec<usize> = state
            .workers
            .iter()
            .filter(|w| !w.held.is_empty())
            .map(|w| w.index)
            .collect();
        if !holding.is_empty() {
            options.push((4, one_of(holding.clone(), |worker| Step::Renew { worker })));
            options.push((1, one_of(holding, |worker| Step::Sweep { worker })));
        }
        if let Some(held) = some_of(state, |w| &w.held) {
            options.push((
                4,
                (held.clone(), verdict())
                    .prop_map(|((worker, generations), verdict)| Step::Ack {
                        worker,
                        generations,
                        verdict,
                    })
                    .boxed(),
            ));
            options.push((
                2,
                held.clone()
                    .prop_map(|(worker, generations)| Step::Release {
                        worker,
                        generations,
                    })
                    .boxed(),
            ));
            let due = prop_oneof![0u64..=5_000, 5_000u64..=60_000];
            options.push((
                3,
                (held, due)
                    .prop_map(|((worker, generations), due_in_ms)| Step::Park {
                        worker,
                        generations,
                        due_in_ms,
                    })
                    .boxed(),
            ));
        }
        if let Some(lost) = some_of(state, |w| &w.lost) {
            options.push((
                3,
                (lost, verdict())
                    .prop_map(|((worker, generations), verdict)| Step::AckLost {
                        worker,
                        generations,
                        verdict,
                    })
                    .boxed(),
            ));
        }
        Union::new_weighted(options).boxed()
    }

    fn preconditions(state: &RefState, step: &Step) -> bool {
        let holds = |w: usize, gens: &[Generation], lost: bool| {
            let set = if lost {
                &state.workers[w].lost
            } else {
                &state.workers[w].held
            };
            gens.iter().all(|g| set.contains_key(g))
        };
        match step {
            Step::Resubmit { of: generation, .. }
            | Step::SubmitAgain { generation }
            | Step::Cancel { generation } => state.generations.contains_key(generation),
            Step::Ack {
                worker,
                generations,
                ..
            }
            | Step::Release {
                worker,
                generations,
            }
            | Step::Park {
                worker,
                generations,
                ..
            } => holds(*worker, generations, false),
            Step::AckLost {
                worker,
                generations,
                ..
            } => holds(*worker, generations, true),
            _ => true,
        }
    }

    fn apply(state: RefState, step: &Step) -> RefState {
        step::apply(state, step).0
    }
}
