//! `ClaimAdmin`: the operator's store operations (dead-letter redrive and purge, release of any owner's claim, pause and resume, promotion of one parked retry now), each one atomic step.
//!
//! These are what `async-worker admin` runs while workers keep running, so
//! each is atomic and safe beside every hot-path operation: a redrive racing
//! a reclaim, a release racing the stale owner's ack, a pause racing a claim
//! lose nothing and produce no second record. The model
//! ([`crate::model::Model`]) is their specification too; the conformance
//! suite's `admin` checks pin them on every store.
//!
//! They are operator commands, run once and reported: unlike the hot path
//! they are not retried or reconciled by the fault-injecting test client, so
//! they live in a trait of their own beside [`ClaimStore`].

use crate::error::Result;
use crate::store::ClaimStore;
use crate::types::{Generation, Member, OwnerToken};
use async_trait::async_trait;

/// What a redrive of one dead entry did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Redrive {
    /// Back in pending at its original score (`wire::queue_score`), its
    /// delivery count reset, its dead entry gone.
    Moved,
    /// No such dead entry (already redriven, purged, or never dead).
    NotDead,
    /// The generation already has its terminal record (for example the
    /// reclaimer's `DELIVERY_LIMIT` record): a copy in pending would only be
    /// dropped as a duplicate, so the entry stays where it is. Resubmit the
    /// request under a new token to run it again, or purge the entry.
    Answered,
    /// The member cannot be parsed: pending would only dead-letter it again,
    /// so it stays where it is.
    Unparsable,
}

/// What a promotion of one parked retry now ([`ClaimAdmin::retry_now`]) did:
/// the promoter's rules, applied to one entry whatever its due time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryNow {
    /// Out of the retry set and into its queue's pending set at its
    /// pending score (`wire::queue_score`), for any replica to claim.
    Promoted,
    /// Not in the retry set (promoted or claimed meanwhile, or never parked).
    NotParked,
    /// Its generation already has its terminal record (a stale owner's ack
    /// answered it while parked): dropped from the retry set with its
    /// delivery count, not promoted, as the promoter drops it.
    Answered,
    /// It cannot be promoted (unparsable, or its queue names a key that is
    /// no queue): moved to the default queue's dead set with the reason, as
    /// the promoter moves it.
    DeadLettered,
}

/// Operator operations on a store. See the module docs.
#[async_trait]
pub trait ClaimAdmin: ClaimStore {
    /// Moves the given dead entries of `queue` back to pending, atomically
    /// each: at the member's original score, with the generation's delivery
    /// count reset. Answers item by item, in order.
    async fn redrive_dead(&self, queue: &str, members: &[Member]) -> Result<Vec<Redrive>>;

    /// Deletes the given dead entries of `queue`; true where one was deleted.
    async fn purge_dead(&self, queue: &str, members: &[Member]) -> Result<Vec<bool>>;

    /// Ends the generation's claim now, whoever holds it: the member goes
    /// back to pending at its original score at once, for any replica to
    /// claim. Not a delivery (as the owner's own release): the delivery count
    /// is kept, unchanged, so a crash loop still meets its limit. A claim
    /// whose generation is answered (a live terminal marker) is dropped
    /// instead, nothing returned. Answers the owner whose claim ended,
    /// `None` when no claim was held. The former
    /// owner's renew then finds the claim lost; its late ack still yields
    /// exactly one record (the ack of a non-holder removes the pending copy
    /// it answers).
    async fn release_claim(
        &self,
        queue: &str,
        generation: &Generation,
    ) -> Result<Option<OwnerToken>>;

    /// Pauses (`true`) or resumes (`false`) claiming from `queue` on every
    /// replica; true when this changed the flag. Claims already held are
    /// untouched: in-flight work finishes and acks normally. Read back with
    /// [`crate::ClaimInspect::paused`].
    async fn set_paused(&self, queue: &str, paused: bool) -> Result<bool>;

    /// Promotes the parked retry `member` (as the retry set holds it) now,
    /// in one atomic step, by the promoter's rules
    /// ([`ClaimStore::promote_due`]) but whatever its due time: to the
    /// queue its `internal.request_queue_name` names (else the default
    /// queue) at its pending score; an answered generation is dropped, an
    /// entry that cannot be promoted dead-lettered. Nothing outside the
    /// entry's own keys moves.
    async fn retry_now(&self, member: &Member) -> Result<RetryNow>;
}
