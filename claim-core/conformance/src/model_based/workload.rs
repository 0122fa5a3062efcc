//! What a random workload is made of: the steps that happen to the system and the verdicts of its handlers.

use super::state::Shape;
use claim_core::types::Generation;
use claim_core::wire::ErrorCode;

/// What a worker's handler produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Success,
    Error(ErrorCode),
}

/// One thing that happens to the system. Indices name [`QUEUES`](super::state::QUEUES) and workers.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The producer submits a new request id.
    Submit {
        queue: usize,
        deadline_in: i64,
        shape: Shape,
    },
    /// The producer resubmits an id with a new token: a new generation.
    Resubmit {
        of: Generation,
        queue: usize,
        deadline_in: i64,
        shape: Shape,
    },
    /// The producer retries a submit: the same member again.
    SubmitAgain {
        generation: Generation,
    },
    /// Someone adds a member nobody can parse.
    SubmitGarbage {
        queue: usize,
        kind: u8,
    },
    /// The producer cancels the id's active generation.
    Cancel {
        generation: Generation,
    },
    /// A worker peeks a batch and claims what it saw (dead-lettering garbage).
    Claim {
        worker: usize,
        queue: usize,
        offset: usize,
        limit: usize,
    },
    /// A worker peeks and claims later (another replica may be faster).
    Peek {
        worker: usize,
        queue: usize,
        limit: usize,
    },
    ClaimPeeked {
        worker: usize,
    },
    /// A heartbeat over everything the worker holds.
    Renew {
        worker: usize,
    },
    /// The worker delivers results for claims it believes it holds.
    Ack {
        worker: usize,
        generations: Vec<Generation>,
        verdict: Verdict,
    },
    /// The worker offers results for claims a renewal reported lost.
    AckLost {
        worker: usize,
        generations: Vec<Generation>,
        verdict: Verdict,
    },
    /// Hand-offs cancelled before the handler took them.
    Release {
        worker: usize,
        generations: Vec<Generation>,
    },
    /// The handler asks for a retry.
    Park {
        worker: usize,
        generations: Vec<Generation>,
        due_in_ms: u64,
    },
    /// Graceful shutdown: everything held goes back, then a new process starts.
    Sweep {
        worker: usize,
    },
    /// The worker dies and restarts with a new owner token, remembering nothing.
    Crash {
        worker: usize,
    },
    Promote {
        limit: usize,
    },
    Reclaim {
        queue: usize,
        limit: usize,
    },
    Tick {
        ms: u64,
    },
    /// Time passes beyond every lease taken so far (a stalled fleet, a
    /// partition) and the reclaimer catches up: holders find their leases lost.
    Stall {
        ms: u64,
    },
}
