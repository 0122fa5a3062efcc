//! A store wrapper that counts what the runtime asks of its store: calls (round trips), claims won and lost, records pushed, and enqueue→result latency.
//!
//! Every hot-path call of the Redis store (peek, claim, ack, renew) is one
//! script or command call, so one call here is one round trip. Records
//! pushed are counted from the ack outcomes, which is how the bench knows
//! the queue is drained without polling Redis itself.

use async_trait::async_trait;
use claim_core::Result;
use claim_core::layer::{Forward, StoreFuture, StoreLayer};
use claim_core::store::{AckItem, AckOutcome, ClaimOutcome, ClaimRequest};
use claim_core::{Holder, Op, Store};
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
    inner: Arc<dyn Store>,
    pub counts: Arc<Counts>,
}

impl Counting {
    pub fn new(inner: Arc<dyn Store>, counts: Arc<Counts>) -> Self {
        Counting { inner, counts }
    }

    fn call(&self) {
        self.counts.calls.fetch_add(1, Ordering::Relaxed);
    }
}

fn add(c: &AtomicU64, n: usize) {
    c.fetch_add(n as u64, Ordering::Relaxed);
}

/// Calls the runtime does not make (the producer's, and the tests'
/// inspection), so they are not the runtime's round trips.
const UNCOUNTED: [Op; 10] = [
    Op::Submit,
    Op::ListLen,
    Op::Enqueue,
    Op::ListTtl,
    Op::Cancel,
    Op::Claims,
    Op::DeadEntries,
    Op::RetryEntries,
    Op::Results,
    Op::IsTerminal,
];

/// Every other call counts as one round trip; peek, claim and ack are
/// also counted by kind.
#[async_trait]
impl StoreLayer for Counting {
    type Inner = dyn Store;

    fn inner(&self) -> &dyn Store {
        &*self.inner
    }

    fn around<'a, T: Send + 'a>(&'a self, op: Op, call: &'a Forward<'a, T>) -> StoreFuture<'a, T> {
        if !UNCOUNTED.contains(&op) {
            self.call();
        }
        if op == Op::Peek {
            add(&self.counts.peeks, 1);
        }
        call()
    }

    async fn claim(&self, by: Holder<'_>, items: &[ClaimRequest]) -> Result<Vec<ClaimOutcome>> {
        self.call();
        add(&self.counts.claim_calls, 1);
        let out = self.inner.claim(by, items).await?;
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

    async fn ack(&self, by: Holder<'_>, items: &[AckItem]) -> Result<Vec<AckOutcome>> {
        self.call();
        add(&self.counts.ack_calls, 1);
        let out = self.inner.ack(by, items).await?;
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
}
