//! Whether an operator paused a queue (`async-worker admin pause`): the consumer's flag, read from the store at most once per poll interval.
//!
//! The flag lives in the store (`<queue>:paused` on Redis), so every
//! replica sees one pause. Each consumer reads it before a poll when its
//! last reading is a poll interval old, and otherwise trusts that reading:
//! a pause or a resume takes effect within one poll interval (plus the poll
//! already under way), and a running queue costs one small read per poll
//! interval, never one per peek. Claims already held are untouched: their
//! work finishes and acks as usual.

use super::Shared;
use crate::config::QueueSpec;
use std::time::Duration;
use tokio::time::Instant;

/// One consumer's last reading of its queue's pause flag.
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
