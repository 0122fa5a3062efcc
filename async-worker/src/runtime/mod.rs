//! The runtime: consumers, workers, heartbeater, reclaimer, promoter and result writer over one `ClaimStore`.
//!
//! Data flow: a consumer per queue peeks and claims a batch and spawns one
//! task per claimed request (bounded by `concurrency`); each task runs the
//! handler and hands its outcome to the single result writer, which batches
//! acks and retry parks. The heartbeater renews every held claim; the
//! reclaimer returns other replicas' expired claims; the promoter returns due
//! retries. Shutdown stops claiming, drains, sweeps what is still held and
//! flushes the writer.

mod consumer;
mod execute;
pub mod held;
mod maintenance;
mod writer;

use crate::config::RuntimeConfig;
use crate::gate::Gate;
use crate::handler::Handler;
use claim_core::{ClaimStore, Clock, OwnerToken};
use held::{Held, StopReason};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How long shutdown waits for the writer to flush after the drain.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(30);

/// Counters of one run, for reports and tests.
#[derive(Debug, Default)]
pub struct Stats {
    pub claimed: AtomicUsize,
    pub records_pushed: AtomicUsize,
    pub duplicates_suppressed: AtomicUsize,
    pub retries: AtomicUsize,
    pub released: AtomicUsize,
    pub swept: AtomicUsize,
    pub lease_lost: AtomicUsize,
    pub redelivered: AtomicUsize,
    pub dead_lettered: AtomicUsize,
}

/// What a run did, returned when it ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunReport {
    pub claimed: usize,
    pub records_pushed: usize,
    pub duplicates_suppressed: usize,
    pub retries: usize,
    pub released: usize,
    pub swept: usize,
    pub lease_lost: usize,
    pub redelivered: usize,
    pub dead_lettered: usize,
}

impl Stats {
    fn report(&self) -> RunReport {
        let get = |c: &AtomicUsize| c.load(Ordering::Relaxed);
        RunReport {
            claimed: get(&self.claimed),
            records_pushed: get(&self.records_pushed),
            duplicates_suppressed: get(&self.duplicates_suppressed),
            retries: get(&self.retries),
            released: get(&self.released),
            swept: get(&self.swept),
            lease_lost: get(&self.lease_lost),
            redelivered: get(&self.redelivered),
            dead_lettered: get(&self.dead_lettered),
        }
    }
}

/// Liveness and readiness, for the health endpoints.
#[derive(Debug, Clone, Default)]
pub struct Health {
    alive: Arc<AtomicBool>,
    consuming: Arc<AtomicBool>,
}

impl Health {
    /// True while the runtime runs (until shutdown completes).
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
    }

    /// True while the runtime is claiming work and its store answers.
    pub fn is_ready(&self) -> bool {
        self.consuming.load(Ordering::Relaxed)
    }
}

/// State every part of the runtime shares.
pub(crate) struct Shared {
    pub store: Arc<dyn ClaimStore>,
    pub handler: Arc<dyn Handler>,
    pub gate: Arc<dyn Gate>,
    pub config: RuntimeConfig,
    pub owner: OwnerToken,
    pub clock: Arc<dyn Clock>,
    pub held: Held,
    pub stats: Stats,
    pub permits: Arc<Semaphore>,
    pub tasks: TaskTracker,
    /// Fires when the run future is dropped: every task stops where it is.
    pub kill: CancellationToken,
    pub deliveries: mpsc::Sender<writer::Delivery>,
}

/// A worker runtime over one store. Build it, then [`Runtime::run`] it.
pub struct Runtime {
    shared: Arc<Shared>,
    receiver: mpsc::Receiver<writer::Delivery>,
    health: Health,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("owner", &self.shared.owner)
            .field("config", &self.shared.config)
            .finish()
    }
}

impl Shared {
    /// Hands an outcome to the writer, marking its claim as settling so a
    /// renewal racing the ack does not count it as a lost lease. A closed
    /// channel means the process is going down hard: the claim lapses and
    /// is redelivered.
    pub async fn hand_to_writer(&self, delivery: writer::Delivery) {
        let (queue, generation) = delivery.claim();
        if let Some(flight) = self.held.flight(queue, generation) {
            flight.settle();
        }
        let _ = self.deliveries.send(delivery).await;
    }

    /// Spawns `task` on `tracker`, stopping it where it stands if the run is killed.
    pub fn spawn(&self, tracker: &TaskTracker, task: impl Future<Output = ()> + Send + 'static) {
        let kill = self.kill.clone();
        tracker.spawn(async move {
            tokio::select! {
                () = kill.cancelled() => {}
                () = task => {}
            }
        });
    }
}

impl Runtime {
    /// A runtime reading time from the system clock.
    pub fn new(
        store: Arc<dyn ClaimStore>,
        handler: Arc<dyn Handler>,
        gate: Arc<dyn Gate>,
        config: RuntimeConfig,
    ) -> Self {
        Self::with_clock(
            store,
            handler,
            gate,
            config,
            Arc::new(claim_memory::SystemClock),
        )
    }

    /// A runtime reading time from `clock` (deadlines, retry due times).
    pub fn with_clock(
        store: Arc<dyn ClaimStore>,
        handler: Arc<dyn Handler>,
        gate: Arc<dyn Gate>,
        config: RuntimeConfig,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let (deliveries, receiver) =
            mpsc::channel(config.concurrency.max(config.ack_batch_size) * 2);
        let owner = OwnerToken::new(format!("{:032x}", rand::random::<u128>()));
        let shared = Arc::new(Shared {
            store,
            handler,
            gate,
            owner,
            clock,
            held: Held::default(),
            stats: Stats::default(),
            permits: Arc::new(Semaphore::new(config.concurrency)),
            tasks: TaskTracker::new(),
            kill: CancellationToken::new(),
            deliveries,
            config,
        });
        Runtime {
            shared,
            receiver,
            health: Health::default(),
        }
    }

    /// The owner token this runtime claims under.
    pub fn owner(&self) -> &OwnerToken {
        &self.shared.owner
    }

    pub fn health(&self) -> Health {
        self.health.clone()
    }

    /// Runs until `shutdown` fires, then drains: stop claiming, wait for
    /// in-flight work up to the drain timeout, stop the rest, flush the
    /// writer, sweep what is still held back to pending.
    ///
    /// Dropping this future (or aborting its task) is a hard stop, like a
    /// crash: every task stops where it stands, nothing is acked or swept,
    /// and the claims lapse to be redelivered by the survivors.
    pub async fn run(self, shutdown: CancellationToken) -> RunReport {
        let Runtime {
            shared,
            receiver,
            health,
        } = self;
        let _hard_stop_on_drop = shared.kill.clone().drop_guard();
        health.alive.store(true, Ordering::Relaxed);
        let stop_consumers = shutdown.child_token();
        let stop_maintenance = CancellationToken::new();
        let stop_writer = CancellationToken::new();
        let background = TaskTracker::new();
        let consumers = TaskTracker::new();
        let writer = TaskTracker::new();
        shared.spawn(
            &writer,
            writer::run(shared.clone(), receiver, stop_writer.clone()),
        );
        writer.close();
        for spec in &shared.config.queues {
            shared.spawn(
                &consumers,
                consumer::run(shared.clone(), spec.clone(), stop_consumers.clone()),
            );
        }
        shared.spawn(
            &background,
            maintenance::heartbeat(shared.clone(), stop_maintenance.clone()),
        );
        shared.spawn(
            &background,
            maintenance::reclaim(shared.clone(), stop_maintenance.clone()),
        );
        shared.spawn(
            &background,
            maintenance::promote(shared.clone(), stop_maintenance.clone()),
        );
        shared.spawn(
            &background,
            maintenance::sample_depths(shared.clone(), stop_maintenance.clone()),
        );
        health
            .consuming
            .store(shared.store.ping().await.is_ok(), Ordering::Relaxed);
        shared.spawn(
            &background,
            watch_readiness(shared.clone(), health.clone(), stop_consumers.clone()),
        );

        stop_consumers.cancelled().await;
        health.consuming.store(false, Ordering::Relaxed);
        tracing::info!(
            in_flight = shared.held.len(),
            "shutting down: claiming stopped, draining"
        );
        // Consumers finish their current batch, releasing what they could not hand over.
        consumers.close();
        consumers.wait().await;
        shared.tasks.close();
        if tokio::time::timeout(shared.config.drain_timeout, shared.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                still_running = shared.tasks.len(),
                "drain timeout: stopping in-flight work"
            );
            shared.held.stop_all(StopReason::Shutdown);
            shared.tasks.wait().await;
        }
        stop_writer.cancel();
        if tokio::time::timeout(FLUSH_TIMEOUT, writer.wait())
            .await
            .is_err()
        {
            tracing::error!(
                "result writer did not flush in time; unacked claims will lapse and be redelivered"
            );
        }
        stop_maintenance.cancel();
        background.close();
        background.wait().await;
        sweep(&shared).await;
        health.alive.store(false, Ordering::Relaxed);
        let report = shared.stats.report();
        tracing::info!(?report, "stopped");
        report
    }
}

/// Returns every claim still held to pending (outcome: swept, not a delivery).
async fn sweep(shared: &Shared) {
    for (queue, generations) in shared.held.by_queue() {
        for chunk in generations.chunks(500) {
            match shared.store.sweep(&queue, &shared.owner, chunk).await {
                Ok(swept) => {
                    let n = swept.iter().filter(|s| **s).count();
                    shared.stats.swept.fetch_add(n, Ordering::Relaxed);
                    tracing::info!(%queue, swept = n, "held claims swept back to pending");
                }
                Err(e) => {
                    tracing::warn!(%queue, error = %e, "sweep failed; the claims will lapse and be redelivered")
                }
            }
            for generation in chunk {
                shared.held.remove(&queue, generation);
            }
        }
    }
}

/// Readiness follows the store: not ready while it does not answer.
async fn watch_readiness(shared: Arc<Shared>, health: Health, stop: CancellationToken) {
    let mut interval = tokio::time::interval(Duration::from_secs(2));
    loop {
        tokio::select! {
            _ = interval.tick() => {
                let ok = shared.store.ping().await.is_ok();
                health.consuming.store(ok && !stop.is_cancelled(), Ordering::Relaxed);
            }
            () = stop.cancelled() => return,
        }
    }
}
