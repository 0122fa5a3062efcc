//! A seeded fault-injecting wrapper around any `ClaimStore`: determinate and indeterminate errors on demand.
//!
//! [`UnreliableStore`] decides, call by call, whether the wrapped store's
//! answer reaches the caller:
//!
//! - a **determinate** fault returns [`StoreError::Failed`] without calling
//!   the inner store: the operation did not happen (connection refused);
//! - an **indeterminate** fault calls the inner store, discards its answer
//!   and returns [`StoreError::Indeterminate`]: the operation happened but
//!   the caller cannot know (a timeout after the script ran).
//!
//! Faults come from two sources: random ones, drawn with the configured
//! [`FaultRates`] from a small xorshift generator seeded at construction (the
//! same seed and the same sequence of calls give the same faults), and
//! scripted ones queued with [`UnreliableStore::fail_next`], which hit the
//! next call of one operation whatever the rates. [`UnreliableStore::set_enabled`]
//! switches both off, for setup and inspection.

use crate::ClaimStore;
use crate::error::StoreError;
use crate::store::{
    AckItem, AckOutcome, ClaimInfo, ClaimOutcome, ClaimRequest, DeadEntry, ParkItem, PendingEntry,
    QueueDepths, ReclaimReport, RenewOutcome, StoreConfig, Submission,
};
use crate::types::{Generation, Member, Millis, OwnerToken};
use async_trait::async_trait;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

mod kinds;

use kinds::XorShift;
pub use kinds::{Fault, FaultRates, Injected, Op, Tally};

#[derive(Debug)]
struct State {
    rng: XorShift,
    rates: FaultRates,
    enabled: bool,
    /// Random faults only hit these operations (all when `None`).
    only: Option<Vec<Op>>,
    scripted: VecDeque<(Op, Fault)>,
}

/// Wraps a store and makes some of its calls fail. See the module docs.
#[derive(Debug)]
pub struct UnreliableStore<S> {
    inner: S,
    seed: u64,
    state: Mutex<State>,
    tally: Arc<Tally>,
}

impl<S: ClaimStore> UnreliableStore<S> {
    /// Wraps `inner`; random faults follow `rates`, drawn from `seed`.
    pub fn new(inner: S, seed: u64, rates: FaultRates) -> Self {
        UnreliableStore {
            inner,
            seed,
            state: Mutex::new(State {
                rng: XorShift::new(seed),
                rates,
                enabled: true,
                only: None,
                scripted: VecDeque::new(),
            }),
            tally: Arc::default(),
        }
    }

    /// Counts this store's faults in `tally` (shared with other stores).
    pub fn sharing_tally(mut self, tally: Arc<Tally>) -> Self {
        self.tally = tally;
        self
    }

    /// The wrapped store, for inspection past the faults.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update of the state is a single assignment; a poisoned lock
        // still holds a consistent state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn rates(&self) -> FaultRates {
        self.lock().rates
    }

    pub fn set_rates(&self, rates: FaultRates) {
        self.lock().rates = rates;
    }

    /// Aims random faults at `ops` only (`None`: every operation).
    pub fn set_only(&self, ops: Option<Vec<Op>>) {
        self.lock().only = ops;
    }

    /// Switches every fault, random and scripted, on or off. Scripted faults
    /// stay queued while off.
    pub fn set_enabled(&self, enabled: bool) {
        self.lock().enabled = enabled;
    }

    pub fn is_enabled(&self) -> bool {
        self.lock().enabled
    }

    /// The next call of `op` fails with `fault`, whatever the rates.
    pub fn fail_next(&self, op: Op, fault: Fault) {
        self.lock().scripted.push_back((op, fault));
    }

    /// Scripted faults not yet delivered.
    pub fn scripted_pending(&self) -> usize {
        self.lock().scripted.len()
    }

    /// Drops scripted faults not yet delivered.
    pub fn clear_scripted(&self) {
        self.lock().scripted.clear();
    }

    /// Faults injected so far (in every store sharing this one's tally).
    pub fn injected(&self) -> Injected {
        self.tally.injected()
    }

    /// Decides the fate of one call of `op`.
    fn roll(&self, op: Op) -> Option<Fault> {
        let mut s = self.lock();
        self.tally.calls.fetch_add(1, Ordering::Relaxed);
        if !s.enabled {
            return None;
        }
        let fault = if let Some(i) = s.scripted.iter().position(|(o, _)| *o == op) {
            s.scripted.remove(i).map(|(_, f)| f)
        } else if s.rates.is_none() || s.only.as_ref().is_some_and(|only| !only.contains(&op)) {
            None
        } else {
            let draw = s.rng.next_f64();
            if draw < s.rates.determinate {
                Some(Fault::Determinate)
            } else if draw < s.rates.determinate + s.rates.indeterminate {
                Some(Fault::Indeterminate)
            } else {
                None
            }
        };
        match fault {
            Some(Fault::Determinate) => self.tally.determinate.fetch_add(1, Ordering::Relaxed),
            Some(Fault::Indeterminate) => self.tally.indeterminate.fetch_add(1, Ordering::Relaxed),
            None => 0,
        };
        fault
    }

    fn detail(&self) -> String {
        let calls = self.tally.calls.load(Ordering::Relaxed);
        format!("injected fault (seed {}, call {calls})", self.seed)
    }
}

/// Runs one call through the dice: `$call` is the inner store's future.
macro_rules! through {
    ($self:ident, $op:expr, $call:expr) => {{
        let op: Op = $op;
        match $self.roll(op) {
            None => $call.await,
            Some(Fault::Determinate) => Err(StoreError::failed(op.name(), $self.detail())),
            Some(Fault::Indeterminate) => {
                let _discarded = $call.await;
                Err(StoreError::indeterminate(op.name(), $self.detail()))
            }
        }
    }};
}

#[async_trait]
impl<S: ClaimStore> ClaimStore for UnreliableStore<S> {
    fn config(&self) -> &StoreConfig {
        self.inner.config()
    }

    async fn now(&self) -> Result<Millis, StoreError> {
        through!(self, Op::Now, self.inner.now())
    }

    async fn ping(&self) -> Result<(), StoreError> {
        through!(self, Op::Ping, self.inner.ping())
    }

    async fn submit(&self, queue: &str, submission: &Submission) -> Result<(), StoreError> {
        through!(self, Op::Submit, self.inner.submit(queue, submission))
    }

    async fn cancel(&self, id: &str) -> Result<bool, StoreError> {
        through!(self, Op::Cancel, self.inner.cancel(id))
    }

    async fn peek(
        &self,
        queue: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<PendingEntry>, StoreError> {
        through!(self, Op::Peek, self.inner.peek(queue, offset, limit))
    }

    async fn claim(
        &self,
        queue: &str,
        owner: &OwnerToken,
        items: &[ClaimRequest],
    ) -> Result<Vec<ClaimOutcome>, StoreError> {
        through!(self, Op::Claim, self.inner.claim(queue, owner, items))
    }

    async fn renew(
        &self,
        queue: &str,
        owner: &OwnerToken,
        generations: &[Generation],
    ) -> Result<Vec<RenewOutcome>, StoreError> {
        through!(self, Op::Renew, self.inner.renew(queue, owner, generations))
    }

    async fn cancelled(&self, generations: &[Generation]) -> Result<Vec<bool>, StoreError> {
        through!(self, Op::Cancelled, self.inner.cancelled(generations))
    }

    async fn ack(
        &self,
        queue: &str,
        owner: &OwnerToken,
        items: &[AckItem],
    ) -> Result<Vec<AckOutcome>, StoreError> {
        through!(self, Op::Ack, self.inner.ack(queue, owner, items))
    }

    async fn release(
        &self,
        queue: &str,
        owner: &OwnerToken,
        generations: &[Generation],
    ) -> Result<Vec<bool>, StoreError> {
        through!(
            self,
            Op::Release,
            self.inner.release(queue, owner, generations)
        )
    }

    async fn sweep(
        &self,
        queue: &str,
        owner: &OwnerToken,
        generations: &[Generation],
    ) -> Result<Vec<bool>, StoreError> {
        through!(self, Op::Sweep, self.inner.sweep(queue, owner, generations))
    }

    async fn park_retry(
        &self,
        queue: &str,
        owner: &OwnerToken,
        items: &[ParkItem],
    ) -> Result<Vec<bool>, StoreError> {
        through!(
            self,
            Op::ParkRetry,
            self.inner.park_retry(queue, owner, items)
        )
    }

    async fn promote_due(&self, limit: usize) -> Result<usize, StoreError> {
        through!(self, Op::PromoteDue, self.inner.promote_due(limit))
    }

    async fn reclaim_expired(
        &self,
        queue: &str,
        limit: usize,
    ) -> Result<ReclaimReport, StoreError> {
        through!(
            self,
            Op::ReclaimExpired,
            self.inner.reclaim_expired(queue, limit)
        )
    }

    async fn dead_letter(
        &self,
        queue: &str,
        member: &Member,
        reason: &str,
    ) -> Result<bool, StoreError> {
        through!(
            self,
            Op::DeadLetter,
            self.inner.dead_letter(queue, member, reason)
        )
    }

    async fn depths(&self, queue: &str) -> Result<QueueDepths, StoreError> {
        through!(self, Op::Depths, self.inner.depths(queue))
    }

    async fn retry_depth(&self) -> Result<usize, StoreError> {
        through!(self, Op::RetryDepth, self.inner.retry_depth())
    }

    async fn claims(&self, queue: &str) -> Result<Vec<ClaimInfo>, StoreError> {
        through!(self, Op::Claims, self.inner.claims(queue))
    }

    async fn dead_entries(&self, queue: &str) -> Result<Vec<DeadEntry>, StoreError> {
        through!(self, Op::DeadEntries, self.inner.dead_entries(queue))
    }

    async fn retry_entries(&self) -> Result<Vec<PendingEntry>, StoreError> {
        through!(self, Op::RetryEntries, self.inner.retry_entries())
    }

    async fn results(&self, list: &str) -> Result<Vec<Member>, StoreError> {
        through!(self, Op::Results, self.inner.results(list))
    }

    async fn is_terminal(&self, generation: &Generation) -> Result<bool, StoreError> {
        through!(self, Op::IsTerminal, self.inner.is_terminal(generation))
    }
}
