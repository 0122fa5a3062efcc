//! The context one queue's consumer works in, and its small store steps: idling, releasing an unknown claim, dead-lettering a member.
//!
//! The poll loop (`poll`), the claim isolation (`isolate`) and the hand-off
//! (`dispatch`) all work on a [`Consumer`]; it imports none of them.

use super::Shared;
use super::candidate::Candidate;
use super::pools::Pool;
use super::release::release_retrying;
use crate::config::QueueSpec;
use crate::gate::DispatchGate;
use crate::metrics;
use claim_core::Generation;
use claim_core::store::PendingEntry;
use claim_core::wire::MemberError;
use std::sync::Arc;
use std::sync::atomic::Ordering;
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
