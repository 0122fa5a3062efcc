//! One replica's view of the store: faults (the claim-core wrapper), traps that stop a call mid-way, crash and freeze.
//!
//! Every store call of a replica passes through its [`Tap`]:
//! - after a crash, no call reaches the store any more (a killed process
//!   sends nothing; calls already sent may still land);
//! - while stalled, calls wait (a process paused, a link hung);
//! - an armed trap stops the next call of one operation, before it reaches
//!   the store or after it took effect, until untrapped (or the replica is
//!   killed there: a crash at that exact point);
//! - while the test inspects the store, calls wait (a consistent snapshot
//!   even with real I/O);
//! - peek and claim right after the gate's budget closed the poll, and a
//!   claim of a member the queue gate held back in that poll, are violations.

use super::gates::PollWatch;
use async_trait::async_trait;
use claim_conformance::unreliable::{Op, Tally, UnreliableStore};
use claim_core::Result;
use claim_core::layer::{Forward, StoreFuture, StoreLayer};
use claim_core::store::{ClaimOutcome, ClaimRequest};
use claim_core::{ClaimStore, Clock, Generation, Holder, Millis, OwnerToken};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;

/// A trap armed on one operation.
#[derive(Debug)]
struct Trap {
    op: Op,
    before: bool,
    sprung: bool,
    release: CancellationToken,
}

/// What every tap shares with the test.
#[derive(Debug)]
pub struct Watch {
    pub clock: Arc<dyn Clock>,
    /// The test takes it for writing to inspect the store.
    pub freeze: RwLock<()>,
    /// The first rule a call broke.
    pub violation: Mutex<Option<String>>,
    /// When each (generation, owner) claim call last reached the store:
    /// a claim can be born with its lease already run out (a request far
    /// past its deadline), and is then reclaimable from that moment.
    pub claimed_at: Mutex<BTreeMap<(Generation, OwnerToken), Millis>>,
    /// How often a trap stopped a call, by operation (for reports).
    pub sprung: Mutex<BTreeMap<Op, usize>>,
    /// Faults injected into every replica's calls.
    pub tally: Arc<Tally>,
}

impl Watch {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Watch {
            clock,
            freeze: RwLock::new(()),
            violation: Mutex::new(None),
            claimed_at: Mutex::new(BTreeMap::new()),
            sprung: Mutex::new(BTreeMap::new()),
            tally: Arc::default(),
        }
    }
}

#[derive(Debug)]
pub struct Tap<S> {
    pub faulty: UnreliableStore<S>,
    dead: AtomicBool,
    trap: Mutex<Option<Trap>>,
    /// While set, every call waits for it (a stalled process, a hung link).
    stall: Mutex<Option<CancellationToken>>,
    watch: Arc<Watch>,
    /// What the replica's queue gate decided in its current poll.
    poll: Arc<PollWatch>,
}

impl<S: ClaimStore> Tap<S> {
    pub fn new(faulty: UnreliableStore<S>, watch: Arc<Watch>, poll: Arc<PollWatch>) -> Self {
        Tap {
            faulty,
            dead: AtomicBool::new(false),
            trap: Mutex::new(None),
            stall: Mutex::new(None),
            watch,
            poll,
        }
    }

    /// The process is gone: from now on no call reaches the store.
    pub fn kill(&self) {
        self.dead.store(true, Ordering::SeqCst);
    }

    pub fn arm(&self, op: Op, before: bool) {
        self.untrap();
        *self.trap.lock().unwrap() = Some(Trap {
            op,
            before,
            sprung: false,
            release: CancellationToken::new(),
        });
    }

    /// Lets a stopped call go on and disarms the trap.
    pub fn untrap(&self) {
        if let Some(t) = self.trap.lock().unwrap().take() {
            t.release.cancel();
        }
    }

    /// From now on calls wait, until [`Tap::resume`].
    pub fn stall(&self) {
        self.stall
            .lock()
            .unwrap()
            .get_or_insert_with(CancellationToken::new);
    }

    pub fn stalled(&self) -> bool {
        self.stall.lock().unwrap().is_some()
    }

    pub fn resume(&self) {
        if let Some(t) = self.stall.lock().unwrap().take() {
            t.cancel();
        }
    }

    pub fn trapped(&self) -> bool {
        self.trap.lock().unwrap().is_some()
    }

    /// A call is stopped in the trap right now.
    pub fn sprung(&self) -> bool {
        self.trap.lock().unwrap().as_ref().is_some_and(|t| t.sprung)
    }

    /// The trap for this call of `op`, if it is the one the trap waits for.
    fn spring(&self, op: Op) -> Option<(bool, CancellationToken)> {
        let mut trap = self.trap.lock().unwrap();
        let t = trap.as_mut().filter(|t| t.op == op && !t.sprung)?;
        t.sprung = true;
        *self.watch.sprung.lock().unwrap().entry(op).or_default() += 1;
        Some((t.before, t.release.clone()))
    }

    fn note(&self, why: String) {
        self.watch.violation.lock().unwrap().get_or_insert(why);
    }

    async fn call<T, Fut>(&self, op: Op, call: impl FnOnce() -> Fut) -> Result<T>
    where
        Fut: Future<Output = Result<T>>,
    {
        self.call_then(op, call, || {}).await
    }

    /// Runs one call through death, the trap and the freeze; `landed` runs
    /// as soon as the store has answered, before any trap holds the answer.
    async fn call_then<T, Fut>(
        &self,
        op: Op,
        call: impl FnOnce() -> Fut,
        landed: impl FnOnce(),
    ) -> Result<T>
    where
        Fut: Future<Output = Result<T>>,
    {
        if matches!(op, Op::Peek | Op::Claim) && self.poll.closed() {
            self.note(format!("{} called right after the gate refused", op.name()));
        }
        let stalled = self.stall.lock().unwrap().clone();
        if let Some(stalled) = stalled {
            stalled.cancelled().await;
        }
        let trap = self.spring(op);
        if let Some((true, release)) = &trap {
            release.cancelled().await;
        }
        if self.dead.load(Ordering::SeqCst) {
            return std::future::pending().await;
        }
        let answer = {
            let _reading = self.watch.freeze.read().await;
            call().await
        };
        landed();
        if let Some((false, release)) = &trap {
            release.cancelled().await;
        }
        if self.dead.load(Ordering::SeqCst) {
            return std::future::pending().await;
        }
        answer
    }
}

/// Every call goes through [`Tap::call`]; a claim also notes when it
/// reached the store.
#[async_trait]
impl<S: ClaimStore> StoreLayer for Tap<S> {
    type Inner = UnreliableStore<S>;

    fn inner(&self) -> &UnreliableStore<S> {
        &self.faulty
    }

    fn around<'a, T: Send + 'a>(&'a self, op: Op, call: &'a Forward<'a, T>) -> StoreFuture<'a, T> {
        Box::pin(self.call(op, call))
    }

    async fn claim(&self, by: Holder<'_>, items: &[ClaimRequest]) -> Result<Vec<ClaimOutcome>> {
        if let Some(item) = items.iter().find(|i| self.poll.held_back(&i.generation.id)) {
            self.note(format!(
                "{} claimed in the poll its queue gate held it back in",
                item.generation
            ));
        }
        let landed = || {
            let now = self.watch.clock.now();
            let mut at = self.watch.claimed_at.lock().unwrap();
            for item in items {
                at.insert((item.generation.clone(), by.owner.clone()), now);
            }
        };
        let call = || ClaimStore::claim(&self.faulty, by, items);
        self.call_then(Op::Claim, call, landed).await
    }
}
