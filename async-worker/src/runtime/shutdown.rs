//! Starting the runtime's tasks and stopping them in order, every wait bounded.
//!
//! Shutdown order: consumers (finish the batch in hand), workers (up to the
//! drain timeout, then stopped), the writer (flushes what it was given), the
//! background loops, then the sweep of every claim still held. Each wait has
//! a bound; at a bound the part is stopped where it stands (its task is
//! dropped), which is always safe: what was not acked stays claimed, and the
//! sweep returns it to pending or its lease lapses and it is redelivered.
//! The bounds after the drain add up to [`AFTER_DRAIN`].

use super::settlement::Settlement;
use super::{Shared, maintenance, writer};
use crate::runtime::held::StopReason;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Stopped work gets this long to return after the drain timeout.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// The writer gets this long to land what it was given.
const FLUSH_BOUND: Duration = Duration::from_secs(4);
/// The background loops get this long to finish their tick.
const BACKGROUND_BOUND: Duration = Duration::from_secs(1);
/// The sweep gets this long.
const SWEEP_BOUND: Duration = Duration::from_secs(3);
/// The most shutdown takes after the drain timeout.
pub const AFTER_DRAIN: Duration = Duration::from_secs(9);

const _: () = assert!(
    STOP_GRACE.as_millis()
        + FLUSH_BOUND.as_millis()
        + BACKGROUND_BOUND.as_millis()
        + SWEEP_BOUND.as_millis()
        <= AFTER_DRAIN.as_millis()
);

/// A group of tasks: its tracker, its polite stop and its hard stop.
pub(super) struct Part {
    tasks: TaskTracker,
    stop: CancellationToken,
    hard: CancellationToken,
}

impl Part {
    fn new(shared: &Shared, stop: CancellationToken) -> Part {
        Part {
            tasks: TaskTracker::new(),
            stop,
            hard: shared.kill.child_token(),
        }
    }

    pub fn spawn(&self, shared: &Shared, task: impl Future<Output = ()> + Send + 'static) {
        shared.spawn_until(&self.tasks, &self.hard, task);
    }

    /// Asks the part to stop, waits up to `bound`, then stops it hard.
    /// Returns false when the bound was reached.
    async fn stop_within(&self, bound: tokio::time::Instant) -> bool {
        self.stop.cancel();
        self.tasks.close();
        let in_time = tokio::time::timeout_at(bound, self.tasks.wait())
            .await
            .is_ok();
        if !in_time {
            self.hard.cancel();
            self.tasks.wait().await;
        }
        in_time
    }
}

/// The running parts of a runtime.
pub(super) struct Parts {
    consumers: Part,
    writer: Part,
    /// The background loops; the runtime adds its readiness watch.
    pub background: Part,
    pub stop_consumers: CancellationToken,
}

impl Parts {
    /// Spawns the writer, one consumer per queue and the background loops.
    pub fn start(
        shared: &Arc<Shared>,
        receiver: mpsc::Receiver<Settlement>,
        shutdown: &CancellationToken,
    ) -> Parts {
        let writer = Part::new(shared, CancellationToken::new());
        writer.spawn(
            shared,
            writer::run(shared.clone(), receiver, writer.stop.clone()),
        );
        let consumers = Part::new(shared, shutdown.child_token());
        for spec in &shared.config.queues {
            consumers.spawn(
                shared,
                super::poll::run(shared.clone(), spec.clone(), consumers.stop.clone()),
            );
        }
        let background = Part::new(shared, CancellationToken::new());
        let stop = &background.stop;
        background.spawn(shared, maintenance::heartbeat(shared.clone(), stop.clone()));
        background.spawn(shared, maintenance::reclaim(shared.clone(), stop.clone()));
        background.spawn(shared, maintenance::promote(shared.clone(), stop.clone()));
        background.spawn(
            shared,
            maintenance::sample_depths(shared.clone(), stop.clone()),
        );
        Parts {
            stop_consumers: consumers.stop.clone(),
            consumers,
            writer,
            background,
        }
    }

    /// Drains and stops everything, in order, within the drain timeout plus [`AFTER_DRAIN`].
    pub async fn stop(self, shared: &Shared) {
        let now = tokio::time::Instant::now();
        let drain_deadline = now + shared.config.drain_timeout;
        // Consumers finish their current batch, releasing what they could not hand over.
        if !self.consumers.stop_within(drain_deadline).await {
            tracing::warn!(
                "consumers did not finish their batch within the drain timeout; stopped"
            );
        }
        shared.tasks.close();
        if tokio::time::timeout_at(drain_deadline, shared.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                still_running = shared.tasks.len(),
                "drain timeout: stopping in-flight work"
            );
            shared.held.stop_all(StopReason::Shutdown);
            if tokio::time::timeout(STOP_GRACE, shared.tasks.wait())
                .await
                .is_err()
            {
                tracing::warn!(
                    "work still waiting to hand over its result; abandoned (its claims are swept)"
                );
                shared.abandon.cancel();
                shared.tasks.wait().await;
            }
        }
        let flushed = self
            .writer
            .stop_within(tokio::time::Instant::now() + FLUSH_BOUND)
            .await;
        shared.abandon.cancel();
        if !flushed {
            tracing::error!(
                held = shared.held.len(),
                "result writer did not flush in time; what it held is swept back or lapses and is redelivered"
            );
        }
        let bound = tokio::time::Instant::now() + BACKGROUND_BOUND;
        if !self.background.stop_within(bound).await {
            tracing::warn!("background loops stopped mid-tick");
        }
        if tokio::time::timeout(SWEEP_BOUND, sweep(shared))
            .await
            .is_err()
        {
            tracing::warn!(
                held = shared.held.len(),
                "sweep did not finish in time; the remaining claims lapse and are redelivered"
            );
        }
    }
}

/// Returns every claim still held to pending (outcome: swept, not a
/// delivery): releases, counted and logged here as the sweep.
async fn sweep(shared: &Shared) {
    for (queue, generations) in shared.held.by_queue() {
        for chunk in generations.chunks(500) {
            match shared.store.release(shared.owner.on(&queue), chunk).await {
                Ok(swept) => {
                    let n = swept.iter().filter(|s| **s).count();
                    shared.stats.swept.fetch_add(n, Ordering::Relaxed);
                    tracing::info!(%queue, swept = n, "held claims swept back to pending");
                }
                Err(e) => {
                    shared.signals.note_store_error(&e);
                    tracing::warn!(%queue, error = %e, "sweep failed; the claims will lapse and be redelivered")
                }
            }
            for generation in chunk {
                shared.held.remove(&queue, generation);
            }
        }
    }
}
