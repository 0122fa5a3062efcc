//! The context one queue's consumer works in, and its small store steps: idling, reading the pause flag, returning claims it will not work on, dead-lettering a member.
//!
//! The poll loop with its claim isolation (`poll`) and the hand-off
//! (`dispatch`) work on a [`Consumer`]; it imports neither.

use super::Shared;
use super::candidate::Candidate;
use super::pools::Pool;
use super::retry::jittered;
use crate::config::QueueSpec;
use crate::gate::DispatchGate;
use crate::metrics;
use claim_core::Generation;
use claim_core::store::PendingEntry;
use claim_core::wire::MemberError;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The context every step of one queue's consumer works in, passed as one
/// value instead of the same four parameters to every function.
pub(super) struct Consumer {
    pub shared: Arc<Shared>,
    pub spec: QueueSpec,
    /// `spec.queue_name`, shared with the workers and the writer.
    pub queue: Arc<str>,
    /// Fires at shutdown: no new polls, no new hand-offs.
    pub stop: CancellationToken,
    /// The pool its requests run in (workers, pool gate).
    pub pool: Arc<Pool>,
    /// Its queue gate, consulted before any claim.
    pub gate: Option<Arc<dyn DispatchGate>>,
    /// Its tier in the pool's tier-priority order (0 is first).
    pub tier: usize,
}

impl Consumer {
    /// Releases members whose claim outcome is unknown: they may be claimed
    /// by this runtime without it knowing. Release is owner-checked, so
    /// members not claimed are untouched.
    pub(super) async fn release_unknown(&self, chunk: Vec<Candidate>) {
        let generations: Vec<Generation> = chunk.into_iter().map(|c| c.generation).collect();
        let why = "after an unknown claim outcome";
        release_retrying(&self.shared, &self.queue, &generations, why).await;
    }

    pub(super) async fn idle(&self) {
        tokio::select! {
            () = tokio::time::sleep(self.shared.config.poll_interval) => {}
            () = self.stop.cancelled() => {}
        }
    }

    pub(super) async fn dead_letter(&self, entry: &PendingEntry, error: &MemberError) {
        let queue = &self.queue;
        let reason = error.to_string();
        tracing::warn!(queue = %queue, bytes = entry.member.len(), %reason, "unparsable member moved to the dead set");
        if self.park_dead(entry, &reason).await {
            metrics::dead_lettered(queue, "unparsable", 1);
        }
    }

    /// Moves a pending member to the dead set with `reason`; true when it moved.
    pub(super) async fn park_dead(&self, entry: &PendingEntry, reason: &str) -> bool {
        let Consumer { shared, queue, .. } = self;
        match shared.store.dead_letter(queue, &entry.member, reason).await {
            Ok(moved) => {
                if moved {
                    shared.stats.dead_lettered.fetch_add(1, Ordering::Relaxed);
                }
                moved
            }
            Err(e) => {
                shared.signals.note_store_error(&e);
                tracing::warn!(error = %e, "dead_letter failed; the member stays pending");
                false
            }
        }
    }
}

/// Returns claims that were never handed to a worker (outcome: released).
pub async fn release(shared: &Shared, queue: &Arc<str>, generations: &[Generation]) {
    release_retrying(
        shared,
        queue,
        generations,
        "of claims not handed to a worker",
    )
    .await;
    for generation in generations {
        shared.held.remove(queue, generation);
    }
}

/// Attempts at a release before its claims are left to lapse.
const RELEASE_ATTEMPTS: u32 = 5;

/// Releases `generations`, retrying a transient failure a few times with
/// backoff (release is owner-checked and idempotent, so a repeat after an
/// uncertain attempt is harmless, and members not claimed are untouched).
/// A permanent refusal, or a store that stays unreachable, leaves the claims
/// to lapse and be redelivered: nothing is lost, and nothing waits forever.
pub async fn release_retrying(
    shared: &Shared,
    queue: &Arc<str>,
    generations: &[Generation],
    what: &str,
) {
    let mut backoff = std::time::Duration::from_millis(50);
    for attempt in 1..=RELEASE_ATTEMPTS {
        match shared
            .store
            .release(shared.owner.on(queue), generations)
            .await
        {
            Ok(released) => {
                let n = released.iter().filter(|r| **r).count();
                shared.stats.released.fetch_add(n, Ordering::Relaxed);
                return;
            }
            Err(e) => {
                shared.signals.note_store_error(&e);
                if !e.is_transient() || attempt == RELEASE_ATTEMPTS {
                    tracing::warn!(%queue, error = %e, claims = generations.len(), "release {what} failed; the claims will lapse and be redelivered");
                    return;
                }
                let pause = jittered(backoff);
                tracing::warn!(%queue, error = %e, retry_in = ?pause, "release {what} failed; retrying");
                tokio::time::sleep(pause).await;
                backoff *= 2;
            }
        }
    }
}

/// One consumer's last reading of its queue's pause flag (`async-worker admin
/// pause`), read from the store at most once per poll interval.
///
/// The flag lives in the store (`<queue>:paused` on Redis), so every
/// replica sees one pause. Each consumer reads it before a poll when its
/// last reading is a poll interval old, and otherwise trusts that reading:
/// a pause or a resume takes effect within one poll interval (plus the poll
/// already under way), and a running queue costs one small read per poll
/// interval, never one per peek. Claims already held are untouched: their
/// work finishes and acks as usual.
#[derive(Debug)]
pub(super) struct PauseFlag {
    every: Duration,
    read_at: Option<Instant>,
    paused: bool,
}

impl PauseFlag {
    pub(super) fn new(every: Duration) -> Self {
        PauseFlag {
            every,
            read_at: None,
            paused: false,
        }
    }

    /// True while the queue is paused: the store's answer when the last
    /// reading is `every` old, else that reading. A failed read keeps the
    /// last reading (the poll's own store calls report the outage).
    pub(super) async fn paused(&mut self, shared: &Shared, spec: &QueueSpec, queue: &str) -> bool {
        let now = Instant::now();
        if self
            .read_at
            .is_some_and(|at| now.duration_since(at) < self.every)
        {
            return self.paused;
        }
        self.read_at = Some(now);
        match shared.store.paused(queue).await {
            Ok(paused) => {
                if paused != self.paused {
                    let state = if paused { "paused" } else { "resumed" };
                    tracing::info!(queue = %spec.id, state, "queue {state} by an operator");
                }
                self.paused = paused;
                crate::metrics::queue_paused(queue, paused);
            }
            Err(e) => {
                shared.signals.note_store_error(&e);
                tracing::warn!(queue = %spec.id, error = %e, "reading the pause flag failed");
            }
        }
        self.paused
    }
}
