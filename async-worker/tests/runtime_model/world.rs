//! The system under test: one store, up to three runtime replicas over it, the producer, the handler and the gate.

use super::gates::{GateBook, PollWatch, ReplicaGate};
use super::handler::Scripted;
use super::pace::Pace;
use super::reference::{GateAt, GateMode, SLOTS};
use super::tap::{Tap, Watch};
use async_worker::config::DEFAULT_POOL;
use async_worker::{QueueSpec, RunReport, Runtime, RuntimeConfig};
use claim_conformance::CheckedStore;
use claim_conformance::unreliable::{FaultRates, Op, UnreliableStore};
use claim_core::store::StoreConfig;
use claim_core::{Clock, Generation, Member, Millis, OwnerToken};
use futures::FutureExt;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

mod act;
mod submit;

/// The one queue, and where every record goes.
pub const Q: &str = "rm-queue";
pub const RESULTS: &str = "rm-results";

/// How a run is paced and bounded (paused time on memory, real on Redis).
#[derive(Debug, Clone)]
pub struct Setting {
    pub pace: Pace,
    pub runtime: RuntimeConfig,
    pub lease_ttl_ms: u64,
    /// Tolerance of the "reclaimed within one interval" rule.
    pub slack_ms: u64,
    /// How long a waited shutdown may take before the test moves on.
    pub shutdown_wait: Duration,
    /// Polls (see [`Pace::poll`]) a crash waits for its trap to spring.
    pub trap_polls: u32,
    /// Handler delays are divided by this.
    pub handler_divisor: u32,
    /// Rounds the finale may take to settle everything, and each round's time.
    pub finale_rounds: u32,
    pub finale_step_ms: u64,
    /// On real time: every so many rounds, jump past every lease.
    pub finale_jump_every: Option<u32>,
}

/// The store's settings in every case.
pub fn store_config(max_deliveries: u32, lease_ttl_ms: u64) -> StoreConfig {
    StoreConfig {
        lease_ttl_ms,
        result_dedup_ttl_ms: 86_400_000,
        max_deliveries,
        retry_set: "rm-retry".to_owned(),
        default_queue: Q.to_owned(),
        default_result_list: RESULTS.to_owned(),
        queue_result_lists: BTreeMap::from([(Q.to_owned(), RESULTS.to_owned())]),
        ..StoreConfig::default()
    }
}

/// The runtime's settings in every case, with the given intervals.
pub fn runtime_config(
    poll: u64,
    reclaim: u64,
    promote: u64,
    timeout: u64,
    drain: u64,
    gate_wait: u64,
) -> RuntimeConfig {
    let ms = Duration::from_millis;
    RuntimeConfig {
        queues: vec![QueueSpec {
            result_queue_name: Some(RESULTS.to_owned()),
            ..QueueSpec::new(Q)
        }],
        concurrency: 3,
        batch_size: 3,
        poll_interval: ms(poll),
        request_timeout: ms(timeout),
        drain_timeout: ms(drain),
        reclaim_interval: ms(reclaim),
        promote_interval: ms(promote),
        ack_batch_size: 4,
        gate_wait_timeout: ms(gate_wait),
        // The backlog sampler's reads (depths, the head of pending's age)
        // feed gauges, not dispatch: off, so every peek the tap sees is a
        // poll's, which a refusing gate must have stopped.
        backlog_poll_interval: Duration::ZERO,
        ..RuntimeConfig::default()
    }
}

/// A running (or draining) runtime.
#[derive(Debug)]
pub struct Replica<S> {
    /// Its start number (counting every runtime started in the case).
    pub number: usize,
    pub tap: Arc<Tap<S>>,
    pub owner: OwnerToken,
    stop: CancellationToken,
    handle: JoinHandle<RunReport>,
    pub stopping: bool,
}

/// What was submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Valid,
    /// Parsable as far as its id, with an invalid deadline.
    Invalid,
    /// Not a request at all.
    Garbage,
}

/// A request the producer submitted.
#[derive(Debug, Clone)]
pub struct Submitted {
    pub generation: Generation,
    pub deadline: Millis,
    pub kind: Kind,
    pub member: Member,
}

#[derive(Debug)]
pub struct World<S> {
    pub setting: Setting,
    /// The store itself, reliable: the producer's and the test's view.
    pub base: S,
    pub clock: Arc<dyn Clock>,
    pub handler: Arc<Scripted>,
    pub gates: Arc<GateBook>,
    pub watch: Arc<Watch>,
    pub slots: Vec<Option<Replica<S>>>,
    /// Per slot: since when it has been up, fault-free and untrapped.
    pub healthy_since: [Option<Millis>; SLOTS],
    pub requests: Vec<Submitted>,
    /// Ids the producer cancelled (the cancel found the request active).
    pub cancelled: BTreeSet<String>,
    seed: u64,
    /// Runtimes started and killed so far, and the reports of those that drained.
    pub started: usize,
    pub kills: usize,
    pub reports: Vec<RunReport>,
    /// When each runtime that is gone (killed, or drained to its end) went, by start number.
    pub gone: BTreeMap<usize, Millis>,
}

impl<S: CheckedStore + Clone> World<S> {
    pub fn new(setting: Setting, base: S, clock: Arc<dyn Clock>, seed: u64) -> Self {
        let gates = Arc::new(GateBook::default());
        let handler = Arc::new(Scripted::new(setting.handler_divisor, gates.clone()));
        World {
            setting,
            base,
            clock: clock.clone(),
            handler,
            gates,
            watch: Arc::new(Watch::new(clock)),
            slots: (0..SLOTS).map(|_| None).collect(),
            healthy_since: [None; SLOTS],
            requests: Vec::new(),
            cancelled: BTreeSet::new(),
            seed,
            started: 0,
            kills: 0,
            reports: Vec::new(),
            gone: BTreeMap::new(),
        }
    }

    pub fn now(&self) -> Millis {
        self.clock.now()
    }

    /// A new runtime in `slot`, over its own tap of the shared store.
    pub fn start(&mut self, slot: usize) {
        self.started += 1;
        let seed = self.seed ^ (self.started as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let faulty = UnreliableStore::new(self.base.clone(), seed, FaultRates::NONE)
            .sharing_tally(self.watch.tally.clone());
        let poll = Arc::new(PollWatch::default());
        let tap = Arc::new(Tap::new(faulty, self.watch.clone(), poll.clone()));
        let gate = |at| ReplicaGate {
            book: self.gates.clone(),
            at,
            replica: self.started,
            poll: poll.clone(),
        };
        let runtime = Runtime::builder(tap.clone())
            .handler(self.handler.clone())
            .gate(gate(GateAt::Queue))
            .pool_gate(DEFAULT_POOL, Arc::new(gate(GateAt::Pool)))
            .config(self.setting.runtime.clone())
            .clock(self.clock.clone())
            .build()
            .expect("valid runtime settings");
        let owner = runtime.owner().clone();
        let stop = CancellationToken::new();
        let handle = tokio::spawn(runtime.run(stop.clone()));
        self.slots[slot] = Some(Replica {
            number: self.started,
            tap,
            owner,
            stop,
            handle,
            stopping: false,
        });
    }

    /// SIGKILL: nothing more reaches the store, and the run future is dropped.
    pub async fn kill(&mut self, slot: usize) {
        if let Some(r) = self.slots[slot].take() {
            self.kills += 1;
            self.gone.insert(r.number, self.clock.now());
            r.tap.kill();
            r.handle.abort();
            let _ = r.handle.await;
        }
    }

    /// Stops the slot's next call of `op` (waiting a while for it), and kills the runtime there.
    async fn crash_at(&mut self, slot: usize, op: Op, before: bool) {
        if let Some(tap) = self.tap(slot).cloned() {
            if !tap.trapped() {
                tap.arm(op, before);
            }
            self.wait_for_trap(&tap).await;
        }
        self.kill(slot).await;
    }

    /// Lets time pass until the tap's trap holds a call (or a while has passed).
    async fn wait_for_trap(&self, tap: &Tap<S>) {
        for _ in 0..self.setting.trap_polls {
            if tap.sprung() {
                return;
            }
            self.setting.pace.poll().await;
        }
    }

    /// Asks the slot's runtime to drain; with `wait`, waits (boundedly) for it.
    pub async fn shut_down(&mut self, slot: usize, wait: bool) {
        let bound = self.setting.shutdown_wait;
        let Some(r) = self.slots[slot].as_mut() else {
            return;
        };
        r.stop.cancel();
        r.stopping = true;
        if wait && let Ok(Ok(report)) = tokio::time::timeout(bound, &mut r.handle).await {
            self.gone.insert(r.number, self.clock.now());
            self.reports.push(report);
            self.slots[slot] = None;
        }
    }

    /// Forgets runtimes whose drain has finished, keeping their reports.
    pub fn reap(&mut self) {
        let now = self.clock.now();
        for slot in &mut self.slots {
            if let Some(r) = slot.as_mut().filter(|r| r.handle.is_finished()) {
                if let Some(Ok(report)) = (&mut r.handle).now_or_never() {
                    self.reports.push(report);
                }
                self.gone.insert(r.number, now);
                *slot = None;
            }
        }
    }

    fn tap(&self, slot: usize) -> Option<&Arc<Tap<S>>> {
        self.slots[slot].as_ref().map(|r| &r.tap)
    }

    /// A slot is healthy while it runs (not draining) with no faults, no trap, no stall.
    pub fn track_health(&mut self) {
        let now = self.now();
        for (slot, since) in self.healthy_since.iter_mut().enumerate() {
            let healthy = self.slots[slot].as_ref().is_some_and(|r| {
                !r.stopping
                    && r.tap.faulty.rates().is_none()
                    && r.tap.faulty.scripted_pending() == 0
                    && !r.tap.trapped()
                    && !r.tap.stalled()
            });
            *since = if healthy {
                Some(since.unwrap_or(now))
            } else {
                None
            };
        }
    }

    /// The end of a case: every fault healed, every trap and handler
    /// released, the gate open and every slot running.
    pub fn make_peace(&mut self) {
        for r in self.slots.iter().flatten() {
            r.tap.faulty.set_rates(FaultRates::NONE);
            r.tap.faulty.clear_scripted();
            r.tap.untrap();
        }
        self.handler.unblock_all();
        self.gates.set(GateMode::Open);
        for slot in 0..SLOTS {
            if self.slots[slot].is_none() {
                self.start(slot);
            }
        }
        self.track_health();
    }

    /// Shuts every replica down gracefully; false if one did not finish in time.
    pub async fn shut_all_down(&mut self) -> bool {
        for slot in 0..SLOTS {
            if let Some(r) = self.slots[slot].as_mut() {
                r.stop.cancel();
                r.stopping = true;
            }
        }
        let mut all = true;
        for slot in 0..SLOTS {
            self.shut_down(slot, true).await;
            all &= self.slots[slot].is_none();
        }
        all
    }

    /// Kills whatever still runs (end of a case, even a failed one).
    pub async fn tear_down(&mut self) {
        for slot in 0..SLOTS {
            self.kill(slot).await;
        }
    }
}
