//! Store calls as data: each is run on the model to get the expected answer, then replayed on the store.

use crate::CheckedStore;
use claim_core::model::Model;
use claim_core::store::{
    AckItem, AckOutcome, ClaimOutcome, ClaimRequest, ParkItem, PendingEntry, ReclaimReport,
    RenewOutcome, Submission,
};
use claim_core::types::{Generation, ManualClock, Member, Millis, OwnerToken};
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
    Claim {
        queue: String,
        owner: OwnerToken,
        items: Vec<ClaimRequest>,
    },
    Renew {
        queue: String,
        owner: OwnerToken,
        generations: Vec<Generation>,
    },
    Ack {
        queue: String,
        owner: OwnerToken,
        items: Vec<AckItem>,
    },
    Release {
        queue: String,
        owner: OwnerToken,
        generations: Vec<Generation>,
    },
    ParkRetry {
        queue: String,
        owner: OwnerToken,
        items: Vec<ParkItem>,
    },
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
            Call::Claim { .. } => Op::Claim,
            Call::Renew { .. } => Op::Renew,
            Call::Ack { .. } => Op::Ack,
            Call::Release { .. } => Op::Release,
            Call::ParkRetry { .. } => Op::ParkRetry,
            Call::PromoteDue { .. } => Op::PromoteDue,
            Call::ReclaimExpired { .. } => Op::ReclaimExpired,
            Call::DeadLetter { .. } => Op::DeadLetter,
        }
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
        Call::Claim {
            queue,
            owner,
            items,
        } => Answer::Claimed(model.claim(queue, owner, items, now)),
        Call::Renew {
            queue,
            owner,
            generations,
        } => Answer::Renewed(model.renew(queue, owner, generations, now)),
        Call::Ack {
            queue,
            owner,
            items,
        } => Answer::Acked(model.ack(queue, owner, items, now)),
        Call::Release {
            queue,
            owner,
            generations,
        } => Answer::Flags(model.release(queue, owner, generations, now)),
        Call::ParkRetry {
            queue,
            owner,
            items,
        } => Answer::Flags(model.park_retry(queue, owner, items, now)),
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
        Call::Claim {
            queue,
            owner,
            items,
        } => Answer::Claimed(store.claim(queue, owner, items).await?),
        Call::Renew {
            queue,
            owner,
            generations,
        } => Answer::Renewed(store.renew(queue, owner, generations).await?),
        Call::Ack {
            queue,
            owner,
            items,
        } => Answer::Acked(store.ack(queue, owner, items).await?),
        Call::Release {
            queue,
            owner,
            generations,
        } => Answer::Flags(store.release(queue, owner, generations).await?),
        Call::ParkRetry {
            queue,
            owner,
            items,
        } => Answer::Flags(store.park_retry(queue, owner, items).await?),
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
