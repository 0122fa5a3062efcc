//! A `ClaimStore` wrapper that counts what the runtime asks of its store: calls (round trips), claims won and lost, records pushed, and enqueue→result latency.
//!
//! Every hot-path call of the Redis store (peek, claim, ack, renew) is one
//! script or command call, so one call here is one round trip. Records
//! pushed are counted from the ack outcomes, which is how the bench knows
//! the queue is drained without polling Redis itself.

use async_trait::async_trait;
use claim_core::store::{
    AckItem, AckOutcome, ClaimInfo, ClaimOutcome, ClaimRequest, DeadEntry, ParkItem, PendingEntry,
    QueueDepths, ReclaimReport, RenewOutcome, StoreConfig, Submission,
};
use claim_core::{ClaimStore, Generation, Member, Millis, OwnerToken, StoreError};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Counters shared by every wrapper of one run (three replicas share one).
#[derive(Debug, Default)]
pub struct Counts {
    pub calls: AtomicU64,
    pub peeks: AtomicU64,
    pub claim_calls: AtomicU64,
    pub ack_calls: AtomicU64,
    pub claimed: AtomicU64,
    /// Members another replica claimed first.
    pub lost: AtomicU64,
    /// Claim calls that won nothing: the peek and the claim were wasted.
    pub empty_claims: AtomicU64,
    pub pushed: AtomicU64,
    pub latency: Option<Latency>,
}

/// Enqueue instants by sequence number, and the latencies observed at ack.
#[derive(Debug)]
pub struct Latency {
    pub origin: Instant,
    /// Nanoseconds after `origin` at which request `seq` was enqueued.
    pub enqueued: Vec<AtomicU64>,
    pub micros: Mutex<Vec<u32>>,
}

impl Latency {
    pub fn new(count: usize) -> Self {
        Latency {
            origin: Instant::now(),
            enqueued: (0..count).map(|_| AtomicU64::new(0)).collect(),
            micros: Mutex::new(Vec::with_capacity(count)),
        }
    }

    pub fn mark_enqueued(&self, seq: usize) {
        let at = self.origin.elapsed().as_nanos() as u64;
        self.enqueued[seq].store(at.max(1), Ordering::Relaxed);
    }

    /// Records the latency of every request whose record is now pushed.
    pub fn record<'a>(&self, ids: impl Iterator<Item = &'a str>) {
        let now = self.origin.elapsed().as_nanos() as u64;
        let mut out = self.micros.lock().unwrap();
        for id in ids {
            let Some(seq) = crate::seq_of(id) else {
                continue;
            };
            let Some(at) = self.enqueued.get(seq).map(|a| a.load(Ordering::Relaxed)) else {
                continue;
            };
            if at > 0 {
                out.push((now.saturating_sub(at) / 1000) as u32);
            }
        }
    }
}

impl Counts {
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

/// The wrapper.
#[derive(Debug, Clone)]
pub struct Counting {
    inner: Arc<dyn ClaimStore>,
    pub counts: Arc<Counts>,
}

impl Counting {
    pub fn new(inner: Arc<dyn ClaimStore>, counts: Arc<Counts>) -> Self {
        Counting { inner, counts }
    }

    fn call(&self) {
        self.counts.calls.fetch_add(1, Ordering::Relaxed);
    }
}

fn add(c: &AtomicU64, n: usize) {
    c.fetch_add(n as u64, Ordering::Relaxed);
}

#[async_trait]
impl ClaimStore for Counting {
    fn config(&self) -> &StoreConfig {
        self.inner.config()
    }

    async fn now(&self) -> Result<Millis, StoreError> {
        self.call();
        self.inner.now().await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.call();
        self.inner.ping().await
    }

    async fn submit(&self, queue: &str, submission: &Submission) -> Result<(), StoreError> {
        self.inner.submit(queue, submission).await
    }

    async fn cancel(&self, id: &str) -> Result<bool, StoreError> {
        self.inner.cancel(id).await
    }

    async fn peek(
        &self,
        queue: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<PendingEntry>, StoreError> {
        self.call();
        add(&self.counts.peeks, 1);
        self.inner.peek(queue, offset, limit).await
    }

    async fn claim(
        &self,
        queue: &str,
        owner: &OwnerToken,
        items: &[ClaimRequest],
    ) -> Result<Vec<ClaimOutcome>, StoreError> {
        self.call();
        add(&self.counts.claim_calls, 1);
        let out = self.inner.claim(queue, owner, items).await?;
        let won = out
            .iter()
            .filter(|o| matches!(o, ClaimOutcome::Claimed { .. }))
            .count();
        let lost = out
            .iter()
            .filter(|o| matches!(o, ClaimOutcome::NotPending))
            .count();
        add(&self.counts.claimed, won);
        add(&self.counts.lost, lost);
        if won == 0 {
            add(&self.counts.empty_claims, 1);
        }
        Ok(out)
    }

    async fn renew(
        &self,
        queue: &str,
        owner: &OwnerToken,
        generations: &[Generation],
    ) -> Result<Vec<RenewOutcome>, StoreError> {
        self.call();
        self.inner.renew(queue, owner, generations).await
    }

    async fn cancelled(&self, generations: &[Generation]) -> Result<Vec<bool>, StoreError> {
        self.call();
        self.inner.cancelled(generations).await
    }

    async fn ack(
        &self,
        queue: &str,
        owner: &OwnerToken,
        items: &[AckItem],
    ) -> Result<Vec<AckOutcome>, StoreError> {
        self.call();
        add(&self.counts.ack_calls, 1);
        let out = self.inner.ack(queue, owner, items).await?;
        let pushed = out.iter().filter(|o| o.pushed).count();
        if let Some(latency) = &self.counts.latency {
            latency.record(
                items
                    .iter()
                    .zip(&out)
                    .filter(|(_, o)| o.pushed)
                    .map(|(i, _)| i.generation.id.as_str()),
            );
        }
        add(&self.counts.pushed, pushed);
        Ok(out)
    }

    async fn release(
        &self,
        queue: &str,
        owner: &OwnerToken,
        generations: &[Generation],
    ) -> Result<Vec<bool>, StoreError> {
        self.call();
        self.inner.release(queue, owner, generations).await
    }

    async fn sweep(
        &self,
        queue: &str,
        owner: &OwnerToken,
        generations: &[Generation],
    ) -> Result<Vec<bool>, StoreError> {
        self.call();
        self.inner.sweep(queue, owner, generations).await
    }

    async fn park_retry(
        &self,
        queue: &str,
        owner: &OwnerToken,
        items: &[ParkItem],
    ) -> Result<Vec<bool>, StoreError> {
        self.call();
        self.inner.park_retry(queue, owner, items).await
    }

    async fn promote_due(&self, limit: usize) -> Result<usize, StoreError> {
        self.call();
        self.inner.promote_due(limit).await
    }

    async fn reclaim_expired(
        &self,
        queue: &str,
        limit: usize,
    ) -> Result<ReclaimReport, StoreError> {
        self.call();
        self.inner.reclaim_expired(queue, limit).await
    }

    async fn dead_letter(
        &self,
        queue: &str,
        member: &Member,
        reason: &str,
    ) -> Result<bool, StoreError> {
        self.call();
        self.inner.dead_letter(queue, member, reason).await
    }

    async fn depths(&self, queue: &str) -> Result<QueueDepths, StoreError> {
        self.call();
        self.inner.depths(queue).await
    }

    async fn retry_depth(&self) -> Result<usize, StoreError> {
        self.call();
        self.inner.retry_depth().await
    }

    async fn claims(&self, queue: &str) -> Result<Vec<ClaimInfo>, StoreError> {
        self.inner.claims(queue).await
    }

    async fn dead_entries(&self, queue: &str) -> Result<Vec<DeadEntry>, StoreError> {
        self.inner.dead_entries(queue).await
    }

    async fn retry_entries(&self) -> Result<Vec<PendingEntry>, StoreError> {
        self.inner.retry_entries().await
    }

    async fn results(&self, list: &str) -> Result<Vec<Member>, StoreError> {
        self.inner.results(list).await
    }

    async fn is_terminal(&self, generation: &Generation) -> Result<bool, StoreError> {
        self.inner.is_terminal(generation).await
    }
}
