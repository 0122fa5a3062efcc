//! Store calls as data: each is run on the model to get the expected answer, then replayed on the store.

use crate::CheckedStore;
use claim_core::clock::ManualClock;
use claim_core::model::Model;
use claim_core::store::{
    AckItem, AckOutcome, ClaimOutcome, ClaimRequest, ParkItem, PendingEntry, ReclaimReport,
    RenewOutcome, Submission,
};
use claim_core::types::{Generation, Holder, Member, Millis, OwnerToken};
use claim_core::{Op, StoreError};

/// One mutating `ClaimStore` operation with its arguments; each variant is
/// named as its [`Op`].
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    Submit {
        queue: String,
        submission: Submission,
    },
    Cancel {
        id: String,
    },
    Peek {
        queue: String,
        offset: usize,
        limit: usize,
    },
    Claim(Batch<ClaimRequest>),
    Renew(Batch<Generation>),
    Ack(Batch<AckItem>),
    Release(Batch<Generation>),
    ParkRetry(Batch<ParkItem>),
    PromoteDue {
        limit: usize,
    },
    ReclaimExpired {
        queue: String,
        limit: usize,
    },
    DeadLetter {
        queue: String,
        member: Member,
        reason: String,
    },
}

impl Call {
    /// The operation this call makes.
    pub fn op(&self) -> Op {
        match self {
            Call::Submit { .. } => Op::Submit,
            Call::Cancel { .. } => Op::Cancel,
            Call::Peek { .. } => Op::Peek,
            Call::Claim(_) => Op::Claim,
            Call::Renew(_) => Op::Renew,
            Call::Ack(_) => Op::Ack,
            Call::Release(_) => Op::Release,
            Call::ParkRetry(_) => Op::ParkRetry,
            Call::PromoteDue { .. } => Op::PromoteDue,
            Call::ReclaimExpired { .. } => Op::ReclaimExpired,
            Call::DeadLetter { .. } => Op::DeadLetter,
        }
    }
}

/// An owner's batch on one queue: what claim, renew, ack, release and
/// park_retry each take.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch<T> {
    pub queue: String,
    pub owner: OwnerToken,
    pub items: Vec<T>,
}

impl<T> Batch<T> {
    pub fn new(queue: &str, owner: &OwnerToken, items: Vec<T>) -> Self {
        Batch {
            queue: queue.to_owned(),
            owner: owner.clone(),
            items,
        }
    }

    /// Its owner on its queue, as the store calls name it.
    pub fn holder(&self) -> Holder<'_> {
        self.owner.on(&self.queue)
    }

    /// Its queue, owner and items, borrowed.
    pub fn parts(&self) -> (&str, &OwnerToken, &[T]) {
        (&self.queue, &self.owner, &self.items)
    }
}

/// What an operation answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Unit,
    Flag(bool),
    Flags(Vec<bool>),
    Pending(Vec<PendingEntry>),
    Claimed(Vec<ClaimOutcome>),
    Renewed(Vec<RenewOutcome>),
    Acked(Vec<AckOutcome>),
    Moved(usize),
    Reclaimed(ReclaimReport),
}

/// A call made at a time, and the model's answer to it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub now: Millis,
    pub call: Call,
    pub answer: Answer,
}

/// Runs a call on the reference model.
pub fn on_model(model: &mut Model, call: &Call, now: Millis) -> Answer {
    match call {
        Call::Submit { queue, submission } => {
            model.submit(queue, submission, now);
            Answer::Unit
        }
        Call::Cancel { id } => Answer::Flag(model.cancel(id, now)),
        Call::Peek {
            queue,
            offset,
            limit,
        } => Answer::Pending(model.peek(queue, *offset, *limit)),
        Call::Claim(b) => Answer::Claimed(model.claim(b.owner.on(&b.queue), &b.items, now)),
        Call::Renew(b) => Answer::Renewed(model.renew(b.owner.on(&b.queue), &b.items, now)),
        Call::Ack(b) => Answer::Acked(model.ack(b.owner.on(&b.queue), &b.items, now)),
        Call::Release(b) => Answer::Flags(model.release(b.owner.on(&b.queue), &b.items, now)),
        Call::ParkRetry(b) => Answer::Flags(model.park_retry(b.owner.on(&b.queue), &b.items, now)),
        Call::PromoteDue { limit } => Answer::Moved(model.promote_due(*limit, now)),
        Call::ReclaimExpired { queue, limit } => {
            Answer::Reclaimed(model.reclaim_expired(queue, *limit, now))
        }
        Call::DeadLetter {
            queue,
            member,
            reason,
        } => Answer::Flag(model.dead_letter(queue, member, reason, now)),
    }
}

/// Runs a call on the store under test.
pub async fn on_store<S: CheckedStore>(store: &S, call: &Call) -> Result<Answer, StoreError> {
    Ok(match call {
        Call::Submit { queue, submission } => {
            store.submit(queue, submission).await?;
            Answer::Unit
        }
        Call::Cancel { id } => Answer::Flag(store.cancel(id).await?),
        Call::Peek {
            queue,
            offset,
            limit,
        } => Answer::Pending(store.peek(queue, *offset, *limit).await?),
        Call::Claim(b) => Answer::Claimed(store.claim(b.holder(), &b.items).await?),
        Call::Renew(b) => Answer::Renewed(store.renew(b.holder(), &b.items).await?),
        Call::Ack(b) => Answer::Acked(store.ack(b.holder(), &b.items).await?),
        Call::Release(b) => Answer::Flags(store.release(b.holder(), &b.items).await?),
        Call::ParkRetry(b) => Answer::Flags(store.park_retry(b.holder(), &b.items).await?),
        Call::PromoteDue { limit } => Answer::Moved(store.promote_due(*limit).await?),
        Call::ReclaimExpired { queue, limit } => {
            Answer::Reclaimed(store.reclaim_expired(queue, *limit).await?)
        }
        Call::DeadLetter {
            queue,
            member,
            reason,
        } => Answer::Flag(store.dead_letter(queue, member, reason).await?),
    })
}

/// Replays the model's calls on the store, each at its time, and checks
/// every answer equals the model's.
pub async fn replay<S: CheckedStore>(
    store: &S,
    clock: &ManualClock,
    trace: &[Entry],
) -> Result<(), String> {
    for (i, entry) in trace.iter().enumerate() {
        clock.set(entry.now);
        let answer = on_store(store, &entry.call).await.map_err(|e| {
            format!(
                "call {} ({}) {:?} failed: {e}",
                i + 1,
                entry.call.op(),
                entry.call
            )
        })?;
        if answer != entry.answer {
            return Err(format!(
                "call {} ({}) answered differently from the model\n  call:  {:?}\n  model: {:?}\n  store: {:?}",
                i + 1,
                entry.call.op(),
                entry.call,
                entry.answer,
                answer
            ));
        }
    }
    Ok(())
}
