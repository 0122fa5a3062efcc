//! In-process store: the claim-core model made shared behind a lock, in every role (`ClaimStore`, `ClaimInspect`, `ClaimProducer`, `ClaimAdmin`).
//!
//! This is not a second implementation: every operation is one call of the
//! [`claim_core::model::Model`] method of its name under a mutex, with
//! `now` read from the store's clock. Use it for tests, single-process
//! deployments and the demo. Nothing survives the process.

use async_trait::async_trait;
use claim_core::Result;
use claim_core::admin::{ClaimAdmin, Redrive, RetryNow};
use claim_core::model::Model;
use claim_core::store::{
    AckItem, AckOutcome, ClaimInfo, ClaimOutcome, ClaimRequest, DeadEntry, ParkItem, PendingEntry,
    QueueDepths, ReclaimReport, RenewOutcome, StoreConfig, Submission,
};
use claim_core::{
    ClaimInspect, ClaimProducer, ClaimStore, Clock, Generation, Holder, Member, Millis, OwnerToken,
    Payload, Record, Score,
};
use std::sync::{Arc, Mutex, MutexGuard};

/// The memory store's default clock (claim-core's one system clock).
pub use claim_core::SystemClock;

/// The memory store. Cheap to clone; clones share state.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    config: StoreConfig,
    model: Arc<Mutex<Model>>,
    clock: Arc<dyn Clock>,
}

impl MemoryStore {
    /// A store on the system clock.
    pub fn new(config: StoreConfig) -> Self {
        Self::with_clock(config, Arc::new(SystemClock))
    }

    /// A store whose time comes from `clock` (a `ManualClock` in tests, or a
    /// clock following tokio's paused time).
    pub fn with_clock(config: StoreConfig, clock: Arc<dyn Clock>) -> Self {
        MemoryStore {
            model: Arc::new(Mutex::new(Model::new(config.clone()))),
            config,
            clock,
        }
    }

    /// A copy of the whole model, for tests comparing stores with the reference.
    pub fn snapshot(&self) -> Model {
        self.lock().clone()
    }

    fn lock(&self) -> MutexGuard<'_, Model> {
        // A panic while holding the lock leaves the model as the last completed
        // transition left it (every transition is applied before it returns),
        // so the state behind a poisoned lock is still consistent.
        self.model.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn with<T>(&self, f: impl FnOnce(&mut Model, Millis) -> T) -> Result<T> {
        let now = self.clock.now();
        Ok(f(&mut self.lock(), now))
    }
}

/// The reads: the model's, under the lock.
#[async_trait]
impl ClaimInspect for MemoryStore {
    async fn depths(&self, queue: &str) -> Result<QueueDepths> {
        self.with(|m, _| m.depths(queue))
    }

    async fn retry_depth(&self) -> Result<usize> {
        self.with(|m, _| m.retry_depth())
    }

    async fn claims(&self, queue: &str) -> Result<Vec<ClaimInfo>> {
        self.with(|m, _| m.claims(queue))
    }

    async fn dead_entries(&self, queue: &str) -> Result<Vec<DeadEntry>> {
        self.with(|m, _| m.dead_entries(queue))
    }

    async fn retry_entries(&self) -> Result<Vec<PendingEntry>> {
        self.with(|m, _| m.retry_entries())
    }

    async fn peek_after(&self, queue: &str, after: Score, n: usize) -> Result<Vec<PendingEntry>> {
        self.with(|m, _| m.peek_after(queue, after, n))
    }

    async fn is_terminal(&self, generation: &Generation) -> Result<bool> {
        self.with(|m, now| m.is_terminal(generation, now))
    }

    async fn list_len(&self, list: &str) -> Result<usize> {
        self.with(|m, _| m.list_len(list))
    }

    async fn paused(&self, queue: &str) -> Result<bool> {
        self.with(|m, _| m.paused(queue))
    }
}

/// The hot path: the model's transitions, under the lock, at the clock's
/// time; `now` and `ping` answer from the store itself.
#[async_trait]
impl ClaimStore for MemoryStore {
    fn config(&self) -> &StoreConfig {
        &self.config
    }

    async fn now(&self) -> Result<Millis> {
        Ok(self.clock.now())
    }

    async fn ping(&self) -> Result<()> {
        Ok(())
    }

    async fn fetch_payloads(&self, refs: &[String]) -> Result<Vec<Option<Payload>>> {
        self.with(|m, now| m.fetch_payloads(refs, now))
    }

    async fn peek(&self, queue: &str, offset: usize, limit: usize) -> Result<Vec<PendingEntry>> {
        self.with(|m, _| m.peek(queue, offset, limit))
    }

    async fn claim(&self, by: Holder<'_>, items: &[ClaimRequest]) -> Result<Vec<ClaimOutcome>> {
        self.with(|m, now| m.claim(by, items, now))
    }

    async fn renew(&self, by: Holder<'_>, generations: &[Generation]) -> Result<Vec<RenewOutcome>> {
        self.with(|m, now| m.renew(by, generations, now))
    }

    async fn cancelled(&self, generations: &[Generation]) -> Result<Vec<bool>> {
        self.with(|m, now| m.cancelled(generations, now))
    }

    async fn ack(&self, by: Holder<'_>, items: &[AckItem]) -> Result<Vec<AckOutcome>> {
        self.with(|m, now| m.ack(by, items, now))
    }

    async fn release(&self, by: Holder<'_>, generations: &[Generation]) -> Result<Vec<bool>> {
        self.with(|m, now| m.release(by, generations, now))
    }

    async fn park_retry(&self, by: Holder<'_>, items: &[ParkItem]) -> Result<Vec<bool>> {
        self.with(|m, now| m.park_retry(by, items, now))
    }

    async fn promote_due(&self, limit: usize) -> Result<usize> {
        self.with(|m, now| m.promote_due(limit, now))
    }

    async fn reclaim_expired(&self, queue: &str, limit: usize) -> Result<ReclaimReport> {
        self.with(|m, now| m.reclaim_expired(queue, limit, now))
    }

    async fn dead_letter(&self, queue: &str, member: &Member, reason: &str) -> Result<bool> {
        self.with(|m, now| m.dead_letter(queue, member, reason, now))
    }
}

/// The producer's calls: the model's, under the lock.
#[async_trait]
impl ClaimProducer for MemoryStore {
    async fn submit(&self, queue: &str, submission: &Submission) -> Result<()> {
        self.with(|m, now| m.submit(queue, submission, now))
    }

    async fn enqueue(&self, queue: &str, submission: &Submission) -> Result<Member> {
        // The model refuses a member it cannot stamp: its answer is a Result.
        self.with(|m, now| m.enqueue(queue, submission, now))?
    }

    async fn cancel(&self, id: &str) -> Result<bool> {
        self.with(|m, now| m.cancel(id, now))
    }
}

/// Whole-list reads for tests, tools and the demo: the model's, under the lock.
#[async_trait]
impl claim_core::ListReads for MemoryStore {
    async fn results(&self, list: &str) -> Result<Vec<Record>> {
        self.with(|m, _| m.results(list))
    }

    async fn list_ttl(&self, list: &str) -> Result<Option<u64>> {
        self.with(|m, _| m.list_ttl(list))
    }
}

/// The operator's operations: the model's, under the same lock.
#[async_trait]
impl ClaimAdmin for MemoryStore {
    async fn redrive_dead(&self, queue: &str, members: &[Member]) -> Result<Vec<Redrive>> {
        self.with(|m, now| m.redrive_dead(queue, members, now))
    }

    async fn purge_dead(&self, queue: &str, members: &[Member]) -> Result<Vec<bool>> {
        self.with(|m, _| m.purge_dead(queue, members))
    }

    async fn release_claim(
        &self,
        queue: &str,
        generation: &Generation,
    ) -> Result<Option<OwnerToken>> {
        self.with(|m, now| m.release_claim(queue, generation, now))
    }

    async fn set_paused(&self, queue: &str, paused: bool) -> Result<bool> {
        self.with(|m, _| m.set_paused(queue, paused))
    }

    async fn retry_now(&self, member: &Member) -> Result<RetryNow> {
        self.with(|m, now| m.retry_now(member, now))
    }
}
