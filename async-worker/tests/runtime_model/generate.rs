//! The transitions, generated from the reference state so that most of them can happen.

use super::reference::{
    Act, GateAct, GateAt, GateMode, GateScripts, MAX_REQUESTS, RefState, SLOTS, Slot, Step, Verdict,
};
use claim_conformance::unreliable::{Fault, Op};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::Union;
use proptest_state_machine::ReferenceStateMachine;

/// The reference state machine.
#[derive(Debug, Clone, Copy)]
pub struct Machine;

fn verdict() -> impl Strategy<Value = Verdict> {
    prop_oneof![
        4 => Just(Verdict::Success),
        2 => Just(Verdict::Error),
        3 => (100u32..=4_000).prop_map(|after_ms| Verdict::Retry { after_ms }),
    ]
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        6 => (verdict(), prop_oneof![0u32..=10, 10u32..=3_000])
            .prop_map(|(verdict, delay_ms)| Act::Answer { verdict, delay_ms }),
        1 => Just(Act::Hang),
        3 => verdict().prop_map(|verdict| Act::Block { verdict }),
    ]
}

/// A gate's answer. The queue gate mostly leaves the member pending; the
/// pool gate waits more, at times long enough to pass the gate wait
/// timeout (the pause doubles from 100 ms to 1 s).
fn gate_act(at: GateAt) -> impl Strategy<Value = GateAct> {
    let (waits, longest_wait, fails) = match at {
        GateAt::Queue => (1, 3, 2),
        GateAt::Pool => (3, 8, 1),
    };
    prop_oneof![
        1 => Just(GateAct::Continue),
        1 => any::<bool>().prop_map(|own| GateAct::Drop { own }),
        2 => Just(GateAct::Refuse),
        waits => (1u8..=longest_wait).prop_map(|times| GateAct::Wait { times }),
        fails => Just(GateAct::Fail),
        1 => Just(GateAct::Hang),
    ]
}

/// Most requests pass both gates; some meet scripted answers at one or both.
fn gate_scripts() -> impl Strategy<Value = GateScripts> {
    let script =
        |at| prop_oneof![2 => Just(Vec::new()), 1 => prop::collection::vec(gate_act(at), 1..=3)];
    (script(GateAt::Queue), script(GateAt::Pool))
        .prop_map(|(queue, pool)| GateScripts { queue, pool })
}

/// Seconds to the deadline: mostly minutes, some seconds, some already past.
fn deadline_in() -> impl Strategy<Value = i64> {
    prop_oneof![6 => 60i64..=600, 2 => 2i64..=20, 1 => -60i64..=0]
}

/// The operations worth stopping a replica in.
fn trap_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Claim),
        4 => Just(Op::Ack),
        2 => Just(Op::ParkRetry),
        2 => Just(Op::Renew),
        2 => Just(Op::Release),
        1 => Just(Op::ReclaimExpired),
        1 => Just(Op::PromoteDue),
    ]
}

/// The operations a draining replica still makes.
fn drain_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Release),
        2 => Just(Op::Ack),
        1 => Just(Op::ParkRetry),
        1 => Just(Op::Renew),
    ]
}

/// The operations worth failing once.
fn fault_op() -> impl Strategy<Value = Op> {
    select(vec![
        Op::Peek,
        Op::Claim,
        Op::Ack,
        Op::ParkRetry,
        Op::Renew,
        Op::Cancelled,
        Op::Release,
        Op::ReclaimExpired,
        Op::PromoteDue,
    ])
}

fn fault() -> impl Strategy<Value = Fault> {
    prop_oneof![Just(Fault::Determinate), Just(Fault::Indeterminate)]
}

fn slots_where(state: &RefState, ok: impl Fn(usize, Slot) -> bool) -> Vec<usize> {
    (0..SLOTS).filter(|&i| ok(i, state.slots[i])).collect()
}

impl ReferenceStateMachine for Machine {
    type State = RefState;
    type Transition = Step;

    fn init_state() -> BoxedStrategy<RefState> {
        let limit = prop_oneof![1 => Just(0u32), 1 => Just(2u32), 2 => 3u32..=5];
        (limit, 1usize..=SLOTS)
            .prop_map(|(max_deliveries, up)| {
                let mut slots = [Slot::Down; SLOTS];
                slots.iter_mut().take(up).for_each(|s| *s = Slot::Up);
                RefState {
                    max_deliveries,
                    slots,
                    trapped: [false; SLOTS],
                    blocks: Vec::new(),
                    gate_records: Vec::new(),
                }
            })
            .boxed()
    }

    fn transitions(state: &RefState) -> BoxedStrategy<Step> {
        let yields = || 0u8..6;
        let mut options: Vec<(u32, BoxedStrategy<Step>)> = vec![
            (
                10,
                prop_oneof![
                    3 => 0u64..=300,
                    3 => 300u64..=5_000,
                    2 => 5_000u64..=20_000,
                ]
                .prop_map(|ms| Step::Advance { ms })
                .boxed(),
            ),
            (
                5,
                yields().prop_map(|yields| Step::Settle { yields }).boxed(),
            ),
            (
                2,
                prop_oneof![
                    3 => Just(GateMode::Open),
                    1 => Just(GateMode::Partial),
                    1 => Just(GateMode::Closed),
                    1 => Just(GateMode::Failing),
                ]
                .prop_map(|mode| Step::SetGate { mode })
                .boxed(),
            ),
        ];
        if state.blocks.len() < MAX_REQUESTS {
            options.push((
                12,
                (
                    deadline_in(),
                    prop::collection::vec(act(), 0..=3),
                    gate_scripts(),
                )
                    .prop_map(|(deadline_in, script, gates)| Step::Submit {
                        deadline_in,
                        script,
                        gates,
                    })
                    .boxed(),
            ));
        }
        if state.blocks.len() < MAX_REQUESTS {
            options.push((
                1,
                any::<bool>()
                    .prop_map(|garbage| Step::SubmitBad { garbage })
                    .boxed(),
            ));
        }
        if !state.blocks.is_empty() {
            options.push((
                3,
                (0..state.blocks.len())
                    .prop_map(|req| Step::Cancel { req })
                    .boxed(),
            ));
        }
        let blocked: Vec<usize> = (0..state.blocks.len())
            .filter(|&r| state.blocks[r] > 0)
            .collect();
        if !blocked.is_empty() {
            options.push((
                8,
                (select(blocked), yields())
                    .prop_map(|(req, yields)| Step::Unblock { req, yields })
                    .boxed(),
            ));
        }
        let down = slots_where(state, |_, s| s != Slot::Up);
        if !down.is_empty() {
            options.push((
                4,
                select(down).prop_map(|slot| Step::Start { slot }).boxed(),
            ));
        }
        let alive = slots_where(state, |_, s| s != Slot::Down);
        if !alive.is_empty() {
            let slot = || select(alive.clone());
            options.push((3, slot().prop_map(|slot| Step::Crash { slot }).boxed()));
            options.push((
                4,
                (slot(), trap_op(), any::<bool>())
                    .prop_map(|(slot, op, before)| Step::CrashAt { slot, op, before })
                    .boxed(),
            ));
            options.push((
                2,
                prop_oneof![
                    3 => (slot(), 0u8..=60, 0u8..=60),
                    // A partition: nothing gets through.
                    1 => (slot(), Just(100u8), Just(0u8)),
                ]
                .prop_map(|(slot, d, i)| Step::Faults {
                    slot,
                    determinate: d.min(100 - i),
                    indeterminate: i,
                })
                .boxed(),
            ));
            options.push((
                4,
                (slot(), fault_op(), fault())
                    .prop_map(|(slot, op, fault)| Step::FailNext { slot, op, fault })
                    .boxed(),
            ));
            options.push((2, slot().prop_map(|slot| Step::Heal { slot }).boxed()));
            options.push((
                3,
                (slot(), 4_000u64..=20_000)
                    .prop_map(|(slot, ms)| Step::Stall { slot, ms })
                    .boxed(),
            ));
            options.push((
                2,
                (slot(), trap_op(), any::<bool>())
                    .prop_map(|(slot, op, before)| Step::Trap { slot, op, before })
                    .boxed(),
            ));
        }
        let up = slots_where(state, |_, s| s == Slot::Up);
        if !up.is_empty() {
            options.push((
                2,
                (select(up.clone()), any::<bool>())
                    .prop_map(|(slot, crash)| Step::ShutdownDuringClaim { slot, crash })
                    .boxed(),
            ));
            options.push((
                2,
                (select(up.clone()), drain_op(), any::<bool>())
                    .prop_map(|(slot, op, before)| Step::CrashWhileDraining { slot, op, before })
                    .boxed(),
            ));
            options.push((
                3,
                (select(up), prop::bool::weighted(0.7))
                    .prop_map(|(slot, wait)| Step::Shutdown { slot, wait })
                    .boxed(),
            ));
        }
        let trapped = slots_where(state, |i, _| state.trapped[i]);
        if !trapped.is_empty() {
            options.push((
                4,
                (select(trapped), yields())
                    .prop_map(|(slot, yields)| Step::Untrap { slot, yields })
                    .boxed(),
            ));
        }
        Union::new_weighted(options).boxed()
    }

    fn preconditions(state: &RefState, step: &Step) -> bool {
        state.allows(step)
    }

    fn apply(state: RefState, step: &Step) -> RefState {
        state.after(step)
    }
}
