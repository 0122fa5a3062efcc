//! The reference side: what the test knows about the fleet (which replicas run, which requests wait for a nudge), the steps, and which step may follow which.

use claim_conformance::unreliable::{Fault, Op};
use std::collections::BTreeSet;

/// Replica slots; a slot runs at most one runtime at a time.
pub const SLOTS: usize = 3;
/// Requests per case at most (keeps cases short).
pub const MAX_REQUESTS: usize = 14;

/// What the handler does on one delivery of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// Answers `verdict` after `delay_ms`.
    Answer { verdict: Verdict, delay_ms: u32 },
    /// Never answers; returns only when the runtime cancels it.
    Hang,
    /// Answers `verdict` once the test unblocks it.
    Block { verdict: Verdict },
}

/// A handler's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Success,
    Error,
    Retry { after_ms: u32 },
}

/// The queue gate's budget every replica reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateMode {
    Open,
    /// Open for a third of a batch.
    Partial,
    Closed,
    Failing,
}

/// Which gate answers: the queue gate at poll time (before any claim), or
/// the pool gate in the worker (after the claim).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GateAt {
    Queue,
    Pool,
}

/// What a gate answers on one call for a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateAct {
    Continue,
    /// With `own`, the gate's own record; else `GATE_DROPPED`.
    Drop {
        own: bool,
    },
    Refuse,
    /// `Wait`, on this many calls in a row.
    Wait {
        times: u8,
    },
    /// An error.
    Fail,
    /// No answer: the call blocks until the runtime gives up on it (a queue
    /// gate after a poll interval, a pool gate at the wait's end).
    Hang,
}

/// A record a gate's answer may end a request with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GateRecord {
    /// `GATE_DROPPED`.
    Dropped,
    /// The gate's own record (a success record carrying the gate's payload).
    Own,
    /// `GATE_ERROR`, `Pool gating error: <error>`.
    Error,
    /// `DEADLINE_EXCEEDED`: the deadline came while the pool gate said wait
    /// (or did not answer).
    WaitedPastDeadline,
}

impl GateAct {
    /// The record this answer may end the request with. At the queue gate
    /// refuse, wait and an error leave the member pending with no write, and
    /// continue dispatches it; at the pool gate continue sends it, refuse
    /// (and a wait past `gate_wait_timeout`) requeues it with its retry
    /// count kept, and neither is a record. A call that never answers is
    /// a refusal at the queue gate (for the rest of the poll too) and a
    /// wait at the pool gate.
    pub fn may_record(self, at: GateAt) -> Option<GateRecord> {
        match (self, at) {
            (GateAct::Drop { own: false }, _) => Some(GateRecord::Dropped),
            (GateAct::Drop { own: true }, _) => Some(GateRecord::Own),
            (GateAct::Fail, GateAt::Pool) => Some(GateRecord::Error),
            (GateAct::Wait { .. } | GateAct::Hang, GateAt::Pool) => {
                Some(GateRecord::WaitedPastDeadline)
            }
            (GateAct::Continue | GateAct::Refuse, _)
            | (GateAct::Fail | GateAct::Wait { .. } | GateAct::Hang, GateAt::Queue) => None,
        }
    }
}

/// A request's gate scripts: what each gate answers on its successive calls
/// for it (then `Continue`), whichever replica asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateScripts {
    pub queue: Vec<GateAct>,
    pub pool: Vec<GateAct>,
}

impl GateScripts {
    /// Every record the scripts may end the request with.
    pub fn may_record(&self) -> BTreeSet<GateRecord> {
        let queue = self
            .queue
            .iter()
            .filter_map(|a| a.may_record(GateAt::Queue));
        let pool = self.pool.iter().filter_map(|a| a.may_record(GateAt::Pool));
        queue.chain(pool).collect()
    }
}

/// One thing that happens to the system.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The producer submits a new request; the handler follows `script`,
    /// one act per delivery (then succeeds), and the gates follow `gates`.
    Submit {
        deadline_in: i64,
        script: Vec<Act>,
        gates: GateScripts,
    },
    /// Someone submits a member with an invalid field (it gets an
    /// `INVALID_REQUEST` record) or one nobody can parse (dead set).
    SubmitBad {
        garbage: bool,
    },
    /// The producer cancels request `req`.
    Cancel {
        req: usize,
    },
    SetGate {
        mode: GateMode,
    },
    /// A new runtime starts in the slot (a leftover still draining is killed).
    Start {
        slot: usize,
    },
    /// SIGKILL: the run future is dropped where it stands.
    Crash {
        slot: usize,
    },
    /// The slot's next call of `op` stops (before or after it reaches the
    /// store); the runtime is killed right there.
    CrashAt {
        slot: usize,
        op: Op,
        before: bool,
    },
    /// SIGTERM: the runtime drains; `wait` waits for it to finish.
    Shutdown {
        slot: usize,
        wait: bool,
    },
    /// SIGTERM while a claim call is under way: the claimed batch cannot be
    /// handed over and is released (with `crash`, SIGKILL inside that release).
    ShutdownDuringClaim {
        slot: usize,
        crash: bool,
    },
    /// SIGTERM, then SIGKILL inside the drain's next call of `op`.
    CrashWhileDraining {
        slot: usize,
        op: Op,
        before: bool,
    },
    /// One blocked delivery of request `req` may answer.
    Unblock {
        req: usize,
        yields: u8,
    },
    /// Time passes (every timer due fires).
    Advance {
        ms: u64,
    },
    /// The slot's store calls hang while `ms` pass (longer than a lease:
    /// the others reclaim its claims, and it finds its leases lost).
    Stall {
        slot: usize,
        ms: u64,
    },
    /// Other tasks run a few turns; no time passes.
    Settle {
        yields: u8,
    },
    /// The slot's store calls fail at random from now on (percent).
    Faults {
        slot: usize,
        determinate: u8,
        indeterminate: u8,
    },
    /// The slot's next call of `op` fails with `fault`.
    FailNext {
        slot: usize,
        op: Op,
        fault: Fault,
    },
    /// The slot's store calls succeed again.
    Heal {
        slot: usize,
    },
    /// The slot's next call of `op` stops (before or after the store) until untrapped.
    Trap {
        slot: usize,
        op: Op,
        before: bool,
    },
    Untrap {
        slot: usize,
        yields: u8,
    },
}

/// A slot as the reference sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Down,
    Up,
    /// Told to shut down; may still be draining.
    Stopping,
}

/// What the test knows.
#[derive(Debug, Clone, PartialEq)]
pub struct RefState {
    pub max_deliveries: u32,
    pub slots: [Slot; SLOTS],
    pub trapped: [bool; SLOTS],
    /// Per submitted request: blocked deliveries not yet unblocked.
    pub blocks: Vec<u32>,
    /// Per submitted request: the records its gate scripts may end it with.
    pub gate_records: Vec<BTreeSet<GateRecord>>,
}

impl RefState {
    /// Whether `step` can happen now (also checked while shrinking).
    pub fn allows(&self, step: &Step) -> bool {
        let slot = |i: usize| self.slots[i];
        match step {
            Step::Submit { .. } | Step::SubmitBad { .. } => self.blocks.len() < MAX_REQUESTS,
            Step::Cancel { req } => *req < self.blocks.len(),
            Step::Unblock { req, .. } => self.blocks.get(*req).is_some_and(|b| *b > 0),
            Step::Start { slot: i } => slot(*i) != Slot::Up,
            Step::Shutdown { slot: i, .. }
            | Step::CrashWhileDraining { slot: i, .. }
            | Step::ShutdownDuringClaim { slot: i, .. } => slot(*i) == Slot::Up,
            Step::Crash { slot: i }
            | Step::CrashAt { slot: i, .. }
            | Step::Faults { slot: i, .. }
            | Step::FailNext { slot: i, .. }
            | Step::Heal { slot: i }
            | Step::Trap { slot: i, .. }
            | Step::Stall { slot: i, .. } => slot(*i) != Slot::Down,
            Step::Untrap { slot: i, .. } => self.trapped[*i],
            Step::SetGate { .. } | Step::Advance { .. } | Step::Settle { .. } => true,
        }
    }

    /// Whether request `req`'s gate scripts allow it to end with `record`.
    pub fn may_end_with(&self, req: usize, record: GateRecord) -> bool {
        self.gate_records
            .get(req)
            .is_some_and(|records| records.contains(&record))
    }

    /// The state after `step`.
    pub fn after(mut self, step: &Step) -> RefState {
        match step {
            Step::Submit { script, gates, .. } => {
                let blocks = script
                    .iter()
                    .filter(|a| matches!(a, Act::Block { .. }))
                    .count();
                self.blocks.push(blocks as u32);
                self.gate_records.push(gates.may_record());
            }
            Step::SubmitBad { .. } => {
                self.blocks.push(0);
                self.gate_records.push(BTreeSet::new());
            }
            Step::Unblock { req, .. } => self.blocks[*req] -= 1,
            Step::Start { slot } => {
                self.slots[*slot] = Slot::Up;
                self.trapped[*slot] = false;
            }
            Step::Crash { slot }
            | Step::CrashAt { slot, .. }
            | Step::CrashWhileDraining { slot, .. } => {
                self.slots[*slot] = Slot::Down;
                self.trapped[*slot] = false;
            }
            Step::ShutdownDuringClaim { slot, crash } => {
                self.slots[*slot] = if *crash { Slot::Down } else { Slot::Stopping };
                self.trapped[*slot] = false;
            }
            Step::Shutdown { slot, wait } => {
                self.slots[*slot] = if *wait { Slot::Down } else { Slot::Stopping };
                if *wait {
                    self.trapped[*slot] = false;
                }
            }
            Step::Trap { slot, .. } => self.trapped[*slot] = true,
            Step::Untrap { slot, .. } => self.trapped[*slot] = false,
            Step::Cancel { .. }
            | Step::SetGate { .. }
            | Step::Advance { .. }
            | Step::Settle { .. }
            | Step::Faults { .. }
            | Step::FailNext { .. }
            | Step::Heal { .. }
            | Step::Stall { .. } => {}
        }
        self
    }
}
