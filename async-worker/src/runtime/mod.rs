//! The runtime: consumers, workers, heartbeater, reclaimer, promoter and result writer over one `ClaimStore`.
//!
//! Data flow: a consumer per queue peeks and claims a batch, fetches the
//! payloads its claimed members store apart in one call, and spawns one
//! task per claimed request (bounded by `concurrency`); each task runs the
//! handler and hands its outcome to the single result writer, which batches
//! acks (each naming its result list and TTL by Go's routing, and the
//! payload key the ack deletes) and retry parks. The heartbeater renews every held claim; the
//! reclaimer returns other replicas' expired claims; the promoter returns due
//! retries. Shutdown stops claiming, drains, sweeps what is still held and
//! flushes the writer.

mod builder;
mod candidate;
mod consumer;
mod dispatch;
mod execute;
mod health;
pub mod held;
mod maintenance;
mod outcomes;
mod payloads;
mod poll;
mod pool_gate;
mod pools;
mod queue_gate;
mod retry;
mod routing;
mod settlement;
mod shutdown;
mod spread;
mod tiers;
mod writer;

pub use builder::{IntoStore, RuntimeBuilder};
pub use health::Health;

use crate::config::RuntimeConfig;
use crate::handler::Handler;
use crate::metrics::QueueCount;
use claim_core::{ClaimStore, Clock, OwnerToken};
use health::Signals;
use held::Held;
use pools::Pools;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Declares [`Stats`] and [`RunReport`] with each counter listed once; the
/// report reads every counter of the list.
macro_rules! run_counters {
    ($($(#[$doc:meta])* $field:ident,)*) => {
        /// Counters of one run, for reports and tests.
        #[derive(Debug, Default)]
        pub struct Stats {
            $($(#[$doc])* pub $field: AtomicUsize,)*
        }

        /// What a run did, returned when it ends.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct RunReport {
            $($(#[$doc])* pub $field: usize,)*
        }

        impl Stats {
            /// Adds `n` (when any) to a queue's `metric` and to this run's count of it.
            fn tally(&self, queue: &str, metric: QueueCount, n: usize) {
                let stat = match metric {
                    QueueCount::Retries => &self.retries,
                    QueueCount::DuplicatesSuppressed => &self.duplicates_suppressed,
                    QueueCount::PendingDuplicatesDropped => &self.pending_duplicates_dropped,
                    QueueCount::RetriedAcksLanded => &self.retried_acks_landed,
                    QueueCount::LeaseLost => &self.lease_lost,
                    _ => unreachable!("{metric:?} is not a run counter"),
                };
                if n > 0 {
                    crate::metrics::count(queue, metric, n);
                    stat.fetch_add(n, Ordering::Relaxed);
                }
            }

            fn report(&self) -> RunReport {
                RunReport {
                    $($field: self.$field.load(Ordering::Relaxed),)*
                }
            }
        }
    };
}

run_counters! {
    claimed,
    records_pushed,
    duplicates_suppressed,
    retries,
    released,
    swept,
    lease_lost,
    redelivered,
    dead_lettered,
    /// Pending copies dropped at claim time: their generation was already answered or claimed.
    pending_duplicates_dropped,
    /// Acks resent after an `Indeterminate` error whose first attempt had landed.
    retried_acks_landed,
    /// Acks and parks the store refused on their own for good (claims left to lapse).
    given_up,
}

/// State every part of the runtime shares.
pub(crate) struct Shared {
    pub store: Arc<dyn ClaimStore>,
    pub handler: Arc<dyn Handler>,
    /// Worker pools (permits, pool gates) and queue gates.
    pub pools: Pools,
    pub config: RuntimeConfig,
    pub owner: OwnerToken,
    pub clock: Arc<dyn Clock>,
    pub held: Held,
    pub stats: Stats,
    pub tasks: TaskTracker,
    /// Fires when the run future is dropped: every task stops where it is.
    pub kill: CancellationToken,
    /// Fires when shutdown's bound is reached: workers stop waiting to hand
    /// their outcome to the writer (the claim stays held and is swept).
    pub abandon: CancellationToken,
    pub settlements: mpsc::Sender<settlement::Settlement>,
    pub signals: Arc<Signals>,
}

/// A worker runtime over one store. Build it with [`Runtime::builder`],
/// then [`Runtime::run`] it.
pub struct Runtime {
    shared: Arc<Shared>,
    receiver: mpsc::Receiver<settlement::Settlement>,
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
    /// Hands an outcome to the writer, marking its claim as handed over so a
    /// renewal racing the ack does not count it as a lost lease. A closed
    /// channel means the process is going down hard: the claim lapses and
    /// is redelivered.
    pub fn hand_to_writer(
        &self,
        settlement: settlement::Settlement,
    ) -> impl Future<Output = ()> + Send + '_ {
        let (queue, generation) = settlement.claim();
        if let Some(flight) = self.held.flight(queue, generation) {
            flight.mark_handed_over();
        }
        self.send_to_writer(settlement)
    }

    /// Sends to the writer unless shutdown's bound passed; then the claim
    /// stays held and the sweep returns it to pending.
    ///
    /// Sent at once where the channel has room, and only a full channel's
    /// wait is a future holding the settlement, boxed: every request's
    /// task reserves room for its largest await, and this one was 784 of
    /// its bytes.
    pub fn send_to_writer(
        &self,
        settlement: settlement::Settlement,
    ) -> impl Future<Output = ()> + Send + '_ {
        let waiting = if self.abandon.is_cancelled() {
            None
        } else {
            match self.settlements.try_send(settlement) {
                Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => None,
                Err(mpsc::error::TrySendError::Full(settlement)) => {
                    Some(Box::pin(self.wait_to_send(settlement)))
                }
            }
        };
        async move {
            if let Some(waiting) = waiting {
                waiting.await;
            }
        }
    }

    async fn wait_to_send(&self, settlement: settlement::Settlement) {
        tokio::select! {
            _ = self.settlements.send(settlement) => {}
            () = self.abandon.cancelled() => {}
        }
    }

    /// Spawns `task` on `tracker`, stopping it where it stands when `hard`
    /// fires (give a child of `kill`, so a hard stop stops it too).
    pub fn spawn_until(
        &self,
        tracker: &TaskTracker,
        hard: &CancellationToken,
        task: impl Future<Output = ()> + Send + 'static,
    ) {
        let hard = hard.clone();
        // Boxed, so the spawned future holds the task once, not beside a
        // second copy of its state in the select below.
        let task = Box::pin(task);
        tracker.spawn(async move {
            tokio::select! {
                () = hard.cancelled() => {}
                () = task => {}
            }
        });
    }
}

impl Runtime {
    /// A builder over `store`: add queues and a handler, then
    /// [`RuntimeBuilder::build`] checks the settings once.
    pub fn builder(store: impl IntoStore) -> RuntimeBuilder {
        RuntimeBuilder::new(store.into_store())
    }

    /// The runtime of settings the builder checked.
    fn assemble(
        store: Arc<dyn ClaimStore>,
        handler: Arc<dyn Handler>,
        pools: Pools,
        config: RuntimeConfig,
        clock: Arc<dyn Clock>,
        owner: OwnerToken,
    ) -> Self {
        let (settlements, receiver) =
            mpsc::channel(config.total_workers().max(config.ack_batch_size) * 2);
        let kill = CancellationToken::new();
        for spec in &config.queues {
            crate::metrics::register_queue(spec);
        }
        for pool in pools.all().filter(|p| p.gate.is_some()) {
            crate::metrics::register_pool_gate(&pool.name);
        }
        let shared = Arc::new(Shared {
            store,
            handler,
            pools,
            owner,
            clock,
            held: Held::default(),
            stats: Stats::default(),
            tasks: TaskTracker::new(),
            abandon: kill.child_token(),
            kill,
            settlements,
            signals: Arc::new(Signals::default()),
            config,
        });
        Runtime { shared, receiver }
    }

    /// The owner token this runtime claims under.
    pub fn owner(&self) -> &OwnerToken {
        &self.shared.owner
    }

    /// The store this runtime works on.
    pub(crate) fn store(&self) -> &Arc<dyn ClaimStore> {
        &self.shared.store
    }

    /// The configuration this runtime was built with.
    pub(crate) fn config(&self) -> &RuntimeConfig {
        &self.shared.config
    }

    /// The claims this runtime holds now.
    pub(crate) fn held(&self) -> &Held {
        &self.shared.held
    }

    pub fn health(&self) -> Health {
        Health {
            signals: self.shared.signals.clone(),
            lease: Duration::from_millis(self.shared.store.config().lease_ttl_ms),
        }
    }

    /// Runs until `shutdown` fires, then drains: stop claiming, wait for
    /// in-flight work up to the drain timeout, stop the rest, flush the
    /// writer, sweep what is still held back to pending. Every step after
    /// the drain is bounded (see `shutdown`), so this returns within the
    /// drain timeout plus [`shutdown::AFTER_DRAIN`] whatever state the store,
    /// the writer or the handler is in.
    ///
    /// Dropping this future (or aborting its task) is a hard stop, like a
    /// crash: every task stops where it stands, nothing is acked or swept,
    /// and the claims lapse to be redelivered by the survivors.
    pub async fn run(self, shutdown: CancellationToken) -> RunReport {
        let Runtime { shared, receiver } = self;
        let _hard_stop_on_drop = shared.kill.clone().drop_guard();
        shared.signals.set_alive(true);
        let parts = shutdown::Parts::start(&shared, receiver, &shutdown);
        // Bounded: a store that hangs at start must not keep SIGTERM waiting.
        let ping = tokio::time::timeout(PING_BOUND, shared.store.ping()).await;
        shared
            .signals
            .set_store_reachable(matches!(ping, Ok(Ok(()))));
        shared.signals.set_consuming(!shutdown.is_cancelled());
        parts.background.spawn(
            &shared,
            watch_readiness(shared.clone(), parts.stop_consumers.clone()),
        );

        shutdown.cancelled().await;
        shared.signals.set_consuming(false);
        tracing::info!(
            in_flight = shared.held.len(),
            "shutting down: claiming stopped, draining"
        );
        parts.stop(&shared).await;
        shared.signals.set_alive(false);
        let report = shared.stats.report();
        tracing::info!(?report, "stopped");
        report
    }
}

/// How long a readiness ping may take before the store counts as unreachable.
const PING_BOUND: Duration = Duration::from_secs(2);

/// Readiness follows the store: not ready while it does not answer. Each
/// tick also samples `store_up` and `writer_failing_seconds`.
async fn watch_readiness(shared: Arc<Shared>, stop: CancellationToken) {
    let mut interval = tokio::time::interval(Duration::from_secs(2));
    let mut was_ready = true;
    loop {
        tokio::select! {
            _ = interval.tick() => {
                // A store that accepts and never answers is unreachable too.
                let reachable = match tokio::time::timeout(PING_BOUND, shared.store.ping()).await {
                    Ok(Ok(())) => true,
                    Ok(Err(e)) => {
                        shared.signals.note_store_error(&e);
                        false
                    }
                    Err(_) => false,
                };
                shared.signals.set_store_reachable(reachable);
                shared.signals.publish_writer_failing();
                let lease = Duration::from_millis(shared.store.config().lease_ttl_ms);
                let why = shared.signals.not_ready_because(lease);
                match (&why, was_ready) {
                    (Some(why), true) => tracing::warn!(%why, "not ready"),
                    (None, false) => tracing::info!("ready again"),
                    _ => {}
                }
                was_ready = why.is_none();
            }
            () = stop.cancelled() => return,
        }
    }
}
