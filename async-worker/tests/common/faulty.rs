//! A `ClaimStore` over the memory store whose faults a test scripts (refuse acks aimed at a list, fail a queue's acks, hang, run out of memory, fail releases or fetches) and which notes the claims, fetches and acks asked of it.
//!
//! Unlike the conformance suite's random `UnreliableStore`, each fault here
//! is exact and may never heal, which is what the isolation tests need.

use async_trait::async_trait;
use claim_core::Result;
use claim_core::layer::{Forward, StoreFuture, StoreLayer};
use claim_core::store::{AckItem, AckOutcome, ClaimOutcome, ClaimRequest};
use claim_core::{ClaimInspect, ClaimStore, Generation, Holder, Op, StoreError};
use claim_memory::MemoryStore;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio_util::sync::CancellationToken;

/// What the store does wrong; every field starts off harmless.
#[derive(Debug, Default)]
pub struct Faults {
    /// Any ack batch holding a record for this list is refused (`Rejected`), as Redis refuses a wrong-type key.
    pub refuse_acks_to: Mutex<Option<String>>,
    /// Those refusals claim to be transient (`Failed`), as a misclassified server error would.
    pub refuse_transiently: AtomicBool,
    /// Acks of records for this list are answered `dead_lettered` (the member
    /// moved to the dead set, its claim dropped), as the store does for a
    /// result list that cannot take a record.
    pub dead_letter_acks_to: Mutex<Option<String>>,
    /// Every ack of this queue fails transiently, for as long as it is set.
    pub fail_acks_of_queue: Mutex<Option<String>>,
    /// Acks answer out of memory while set.
    pub acks_out_of_memory: AtomicBool,
    /// Every operation hangs while set (a server that accepts and never answers).
    pub hang: AtomicBool,
    /// This many release calls fail (`Failed`) before releases work again.
    pub failing_releases: AtomicUsize,
    /// This many fetch calls fail (`Failed`) before fetches work again.
    pub failing_fetches: AtomicUsize,
    /// This many ack calls land and then answer `Indeterminate` (a reply lost after the script ran).
    pub acks_landing_unanswered: AtomicUsize,
    /// Any claim batch holding a member whose bytes contain this is refused (`Rejected`).
    pub refuse_claims_of: Mutex<Option<String>>,
    /// Claim calls made, whatever their answer.
    pub claim_calls: AtomicUsize,
    /// The refs of every fetch call, in order, whatever its answer.
    pub fetches: Mutex<Vec<Vec<String>>>,
    /// Every ack item offered, in order, whatever the answer.
    pub acks: Mutex<Vec<AckItem>>,
    /// Fired after a claim lands (to race a shutdown against a hand-off).
    pub after_claim: Mutex<Option<CancellationToken>>,
}

#[derive(Debug, Clone)]
pub struct FaultyStore {
    pub inner: MemoryStore,
    pub faults: std::sync::Arc<Faults>,
    /// Ack calls made, whatever their answer.
    pub ack_calls: std::sync::Arc<AtomicUsize>,
}

impl FaultyStore {
    pub fn new(inner: MemoryStore) -> Self {
        FaultyStore {
            inner,
            faults: Default::default(),
            ack_calls: Default::default(),
        }
    }

    async fn gate(&self) {
        while self.faults.hang.load(Ordering::SeqCst) {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

impl FaultyStore {
    /// Acks `items`, dead-lettering those aimed at `list` (release, then dead_letter).
    async fn ack_dead_lettering(
        &self,
        by: Holder<'_>,
        items: &[AckItem],
        list: &str,
    ) -> Result<Vec<AckOutcome>> {
        let claims = self.inner.claims(by.queue).await?;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            if item.result_list != list {
                out.extend(self.inner.ack(by, std::slice::from_ref(item)).await?);
                continue;
            }
            let held = claims.iter().find(|c| c.generation == item.generation);
            let mut dropped = false;
            if let Some(claim) = held {
                dropped = self
                    .inner
                    .release(by, std::slice::from_ref(&item.generation))
                    .await?[0];
                let reason = format!("result list \"{list}\" holds a zset");
                self.inner
                    .dead_letter(by.queue, &claim.member, &reason)
                    .await?;
            }
            out.push(AckOutcome {
                pushed: false,
                claim_dropped: dropped,
                dead_lettered: true,
                own_record_landed: false,
            });
        }
        Ok(out)
    }
}

/// Takes one from a count of faults still to inject: true (and one fewer
/// left) while any are left.
pub fn take_one(left: &AtomicUsize) -> bool {
    left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

/// Whether `op` waits while the store "hangs": everything the runtime calls
/// does (`depths` too, for readiness); producer calls and the rest of
/// inspection go straight through, as the tests script them around a hang.
fn hangs(op: Op) -> bool {
    let producer = matches!(op, Op::Submit | Op::Enqueue | Op::Cancel);
    let inspection = op.inspects() && op != Op::Depths;
    !(producer || inspection || op == Op::CheckDurability)
}

#[async_trait]
impl StoreLayer for FaultyStore {
    type Inner = MemoryStore;

    fn inner(&self) -> &MemoryStore {
        &self.inner
    }

    fn around<'a, T: Send + 'a>(&'a self, op: Op, call: &'a Forward<'a, T>) -> StoreFuture<'a, T> {
        Box::pin(async move {
            if hangs(op) {
                self.gate().await;
            }
            call().await
        })
    }

    async fn claim(&self, by: Holder<'_>, items: &[ClaimRequest]) -> Result<Vec<ClaimOutcome>> {
        self.gate().await;
        self.faults.claim_calls.fetch_add(1, Ordering::SeqCst);
        let refused = self.faults.refuse_claims_of.lock().unwrap().clone();
        if let Some(needle) = refused
            && items.iter().any(|i| {
                i.member
                    .as_bytes()
                    .windows(needle.len())
                    .any(|w| w == needle.as_bytes())
            })
        {
            return Err(StoreError::rejected(
                Op::Claim,
                "ERR user_script: WRONGTYPE Operation against a key holding the wrong kind of value",
            ));
        }
        let answer = self.inner.claim(by, items).await;
        if let Some(token) = self.faults.after_claim.lock().unwrap().take() {
            token.cancel();
        }
        answer
    }
    async fn ack(&self, by: Holder<'_>, items: &[AckItem]) -> Result<Vec<AckOutcome>> {
        self.ack_calls.fetch_add(1, Ordering::SeqCst);
        self.faults.acks.lock().unwrap().extend_from_slice(items);
        self.gate().await;
        if self.faults.acks_out_of_memory.load(Ordering::SeqCst) {
            return Err(StoreError::out_of_memory(
                Op::Ack,
                "OOM command not allowed",
            ));
        }
        if self.faults.fail_acks_of_queue.lock().unwrap().as_deref() == Some(by.queue) {
            return Err(StoreError::failed(Op::Ack, "connection refused"));
        }
        let refused = self.faults.refuse_acks_to.lock().unwrap().clone();
        if let Some(list) = refused
            && items.iter().any(|i| i.result_list == list)
        {
            let detail = "WRONGTYPE Operation against a key holding the wrong kind of value";
            if self.faults.refuse_transiently.load(Ordering::SeqCst) {
                return Err(StoreError::failed(Op::Ack, detail));
            }
            return Err(StoreError::rejected(Op::Ack, detail));
        }
        let dead_list = self.faults.dead_letter_acks_to.lock().unwrap().clone();
        if let Some(list) = dead_list
            && items.iter().any(|i| i.result_list == list)
        {
            return self.ack_dead_lettering(by, items, &list).await;
        }
        let answer = self.inner.ack(by, items).await;
        if take_one(&self.faults.acks_landing_unanswered) {
            return Err(StoreError::indeterminate(Op::Ack, "no answer within 5s"));
        }
        answer
    }
    async fn fetch_payloads(&self, refs: &[String]) -> Result<Vec<Option<claim_core::Payload>>> {
        self.faults.fetches.lock().unwrap().push(refs.to_vec());
        self.gate().await;
        if take_one(&self.faults.failing_fetches) {
            return Err(StoreError::failed(Op::FetchPayloads, "connection refused"));
        }
        self.inner.fetch_payloads(refs).await
    }
    async fn release(&self, by: Holder<'_>, generations: &[Generation]) -> Result<Vec<bool>> {
        self.gate().await;
        if take_one(&self.faults.failing_releases) {
            return Err(StoreError::failed(Op::Release, "connection reset"));
        }
        self.inner.release(by, generations).await
    }
}
