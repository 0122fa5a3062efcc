//! The `ClaimStore` trait the worker runtime programs against (the hot path), its read-only `ClaimInspect` half, and the request and report types every store trait speaks.
//!
//! Batch operations answer item by item, in the order asked. Every claim
//! mutation names its owner and is owner-checked inside the store, atomically.

use crate::error::Result;
use crate::stored::{Payload, Record};
use crate::types::{Generation, Holder, Member, Millis, OwnerToken, Score};
use crate::wire;
use async_trait::async_trait;

pub use crate::config::{MAX_BATCH, MAX_RESULT_DEDUP_TTL_MS, MIN_LEASE_TTL_MS, StoreConfig};

/// A producer's submission, as the Go producer writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    pub member: Member,
    pub generation: Generation,
    /// Unix seconds; the member's score with its enqueue sequence
    /// ([`wire::queue_score`]).
    pub deadline: i64,
    /// The payload stored apart, at `request-payload:<id>:<token>` (the
    /// only payload key a member may name), when the producer splits it
    /// off (the member then has `"payload":null`). Empty bytes stand for a
    /// `null` payload, as Go stores it.
    pub payload: Option<Payload>,
}

impl Submission {
    /// The member's pending score: its deadline and, when the member
    /// carries one, its `internal.enqueue_seq` ([`wire::queue_score`]).
    pub fn score(&self) -> Score {
        let seq = wire::parse_member(self.member.as_bytes())
            .ok()
            .and_then(|p| p.enqueue_seq);
        wire::queue_score(self.deadline, seq)
    }

    /// Where [`Submission::payload`] is stored:
    /// `request-payload:<id>:<token>`, derived from the generation, never
    /// read from the member (a member naming another key is refused when
    /// parsed).
    pub fn payload_key(&self) -> String {
        wire::payload_key(&self.generation.id, &self.generation.token)
    }

    /// The request that claims this submission: its member and generation.
    pub fn claim_request(&self) -> ClaimRequest {
        ClaimRequest {
            member: self.member.clone(),
            generation: self.generation.clone(),
        }
    }
}

/// A pending member and its score.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingEntry {
    pub member: Member,
    pub score: Score,
}

/// One member to claim, with the generation the caller parsed from it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimRequest {
    pub member: Member,
    pub generation: Generation,
}

/// What a claim of one member did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClaimOutcome {
    /// The caller now holds the claim.
    Claimed {
        /// The producer cancelled this generation: ack it with `CANCELLED`.
        cancelled: bool,
        /// Earlier deliveries of this generation that ended in an expired lease.
        redeliveries: u32,
        /// The member's score in the pending set (its deadline, as the
        /// producer scored it; the lease follows `data.deadline` instead).
        score: Score,
        lease_expiry: Millis,
    },
    /// The member was no longer pending: another replica claimed it, or it left.
    NotPending,
    /// The generation already has a terminal record or a live claim, so the
    /// pending copy was a duplicate and was removed instead of dispatched.
    DuplicateDropped,
    /// The member cannot be served here (a key it needs holds the wrong type,
    /// or it is malformed): it moved to `<queue>:dead` with the reason, on
    /// its own, while the rest of the batch was claimed.
    DeadLettered,
}

/// What a renewal of one claim did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenewOutcome {
    Renewed {
        lease_expiry: Millis,
    },
    /// The claim is gone or held by another owner: stop working on it.
    Lost,
}

/// A terminal record to deliver for one generation.
#[derive(Debug, Clone, PartialEq)]
pub struct AckItem {
    pub generation: Generation,
    /// The member exactly as claimed: dead-lettered as is when the result
    /// list is unusable, and removed from pending (a copy of the same
    /// generation the reclaimer put back) when the record lands.
    pub member: Member,
    /// The member's pending score, from [`ClaimOutcome::Claimed`]. Not
    /// used for the terminal marker's expiry: that follows the member's
    /// `data.deadline` ([`crate::lease::marker_expiry`],
    /// [`wire::member_deadline`]), which a producer's score cannot shorten.
    pub score: Score,
    pub result_list: String,
    /// The result record JSON, pushed as is.
    pub record: Record,
    /// The member's `internal.payload_ref` (unprefixed, e.g.
    /// `request-payload:<id>:<token>`): deleted by this ack, atomically with
    /// it, when the caller held the claim and the item was not dead-lettered
    /// (a redrive still needs it); left alone otherwise.
    pub payload_ref: Option<String>,
    /// `EXPIRE` the result list for this many seconds after the record is
    /// pushed (Go's `result_ttl_seconds`; at most
    /// [`crate::routing::MAX_RESULT_TTL_SECONDS`], a larger one is clamped
    /// to it); 0 sets no expiry. Nothing is set
    /// when nothing is pushed.
    pub result_ttl_seconds: u64,
}

/// What an ack of one generation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckOutcome {
    /// False when an earlier terminal record exists: this one was suppressed.
    pub pushed: bool,
    /// True when the caller owned the claim and it was dropped.
    pub claim_dropped: bool,
    /// True when the result list cannot take a record (it holds another
    /// type, or names a queue, a bookkeeping key or the retry set): nothing
    /// was pushed, no marker written, the member went to `<queue>:dead`
    /// with the reason, a pending copy of it was removed, and the claim was
    /// dropped. Only the claim's holder dead-letters: for a caller that does
    /// not hold the claim the item changes nothing (all flags false), since
    /// the generation is elsewhere (another owner's claim, pending, parked)
    /// and whoever takes it there meets the same list.
    pub dead_lettered: bool,
    /// True when nothing was pushed because the live marker was written by
    /// this very record: an earlier attempt of this ack (one that ended in
    /// an indeterminate error) landed. Not a suppressed duplicate; `pushed`
    /// false with this false means another record answered first.
    pub own_record_landed: bool,
}

/// A claimed generation to park in the retry set.
#[derive(Debug, Clone, PartialEq)]
pub struct ParkItem {
    pub generation: Generation,
    /// The member stamped for retry (see [`wire::stamp_retry`]).
    pub member: Member,
    pub due: Millis,
}

/// The calls that take items name one generation per item; this gives them
/// in order, for code that reasons about generations whatever the item kind.
pub fn generations_of<T: AsRef<Generation>>(items: &[T]) -> Vec<Generation> {
    items.iter().map(|i| i.as_ref().clone()).collect()
}

macro_rules! names_a_generation {
    ($($item:ty),*) => {
        $( impl AsRef<Generation> for $item {
            fn as_ref(&self) -> &Generation {
                &self.generation
            }
        } )*
    };
}

names_a_generation!(ClaimRequest, AckItem, ParkItem);

/// What one reclaim batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReclaimReport {
    /// Expired claims returned to pending.
    pub redelivered: usize,
    /// Expired claims at the delivery limit: `DELIVERY_LIMIT` record, dead set.
    pub dead_lettered: usize,
    /// Bookkeeping cleaned up: an index entry without a claim or the reverse,
    /// or an expired claim of a generation that already has its terminal
    /// record (dropped, neither redelivered nor dead-lettered).
    pub ghosts_repaired: usize,
    /// Expired claims remain beyond this batch: call again.
    pub more: bool,
}

/// Sizes of one queue's sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueDepths {
    pub pending: usize,
    /// Live claims (not hash fields).
    pub claimed: usize,
    pub dead: usize,
}

/// A live claim, for inspection.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimInfo {
    pub generation: Generation,
    pub member: Member,
    pub owner: OwnerToken,
    pub score: Score,
    pub lease_expiry: Millis,
    pub redeliveries: u32,
}

/// A dead-lettered member and why.
#[derive(Debug, Clone, PartialEq)]
pub struct DeadEntry {
    pub member: Member,
    pub reason: String,
    pub at: Millis,
}

/// Read-only views of a store's state, for metrics, tests and reconciliation.
///
/// Nothing here changes the store, and the worker's hot path asks none of
/// it: a store answers these with plain reads.
#[async_trait]
pub trait ClaimInspect: Send + Sync + std::fmt::Debug + 'static {
    /// Sizes of the queue's sets.
    async fn depths(&self, queue: &str) -> Result<QueueDepths>;

    /// Number of entries in the retry set.
    async fn retry_depth(&self) -> Result<usize>;

    /// The queue's live claims.
    async fn claims(&self, queue: &str) -> Result<Vec<ClaimInfo>>;

    /// The queue's dead-lettered members.
    async fn dead_entries(&self, queue: &str) -> Result<Vec<DeadEntry>>;

    /// The retry set, earliest due first.
    async fn retry_entries(&self) -> Result<Vec<PendingEntry>>;

    /// Up to `n` pending members of `queue` whose score is greater
    /// than `after`, earliest score first (`ZRANGEBYSCORE (after +inf`):
    /// the page after one whose last score was `after`, found without
    /// reading the pages before it (`admin pending --after`). Members that
    /// share `after` itself are not in it.
    async fn peek_after(&self, queue: &str, after: Score, n: usize) -> Result<Vec<PendingEntry>>;

    /// True when the generation has a live terminal marker.
    async fn is_terminal(&self, generation: &Generation) -> Result<bool>;

    /// The number of records in a result list (`LLEN`).
    async fn list_len(&self, list: &str) -> Result<usize>;

    /// True while an operator has paused claiming from `queue`
    /// ([`crate::ClaimAdmin::set_paused`]). The runtime reads it at most once
    /// per poll interval per queue.
    async fn paused(&self, queue: &str) -> Result<bool>;
}

/// Durable claim bookkeeping for one or more pending sorted sets: the
/// worker's calls, every one the runtime makes on its hot path.
///
/// Time comes from the store's own clock (the Redis server's `TIME`, or an
/// injected clock), so replicas never disagree about lease expiry. Every
/// store can also be inspected ([`ClaimInspect`]), so one
/// `Arc<dyn ClaimStore>` serves both the hot path and metrics. What a
/// producer asks is [`crate::ClaimProducer`]; what an operator asks,
/// [`crate::ClaimAdmin`].
#[async_trait]
pub trait ClaimStore: ClaimInspect {
    /// The settings this store was built with.
    fn config(&self) -> &StoreConfig;

    /// The store's current time.
    async fn now(&self) -> Result<Millis>;

    /// Checks the store answers.
    async fn ping(&self) -> Result<()>;

    /// The payloads stored apart at `refs` (members' `internal.payload_ref`,
    /// unprefixed; the store applies its key prefix), in order, `None` where
    /// none is stored (expired, deleted, never written). One round trip per
    /// call. An empty value is a `null` payload.
    async fn fetch_payloads(&self, refs: &[String]) -> Result<Vec<Option<Payload>>>;

    /// Up to `limit` pending members from rank `offset`, earliest score first.
    async fn peek(&self, queue: &str, offset: usize, limit: usize) -> Result<Vec<PendingEntry>>;

    /// Moves pending members into claims `by` holds (its owner, in its
    /// queue), atomically each.
    async fn claim(&self, by: Holder<'_>, items: &[ClaimRequest]) -> Result<Vec<ClaimOutcome>>;

    /// Extends the leases `by` holds.
    async fn renew(&self, by: Holder<'_>, generations: &[Generation]) -> Result<Vec<RenewOutcome>>;

    /// For each generation, whether the producer has cancelled it (its cancel
    /// marker holds this generation's token). Heartbeats ask this so work on
    /// a request cancelled mid-flight can be stopped.
    async fn cancelled(&self, generations: &[Generation]) -> Result<Vec<bool>>;

    /// Delivers terminal records. For each: the record is pushed and the
    /// terminal marker written unless a marker exists (first record wins,
    /// whoever produced it); the claim is dropped only if `by` holds it.
    /// Idempotent: safe to retry after an indeterminate error.
    async fn ack(&self, by: Holder<'_>, items: &[AckItem]) -> Result<Vec<AckOutcome>>;

    /// Returns claims `by` holds to pending at their original score
    /// (a hand-off the consumer cancelled, or the shutdown sweep of every
    /// claim still held after the drain). Not a delivery: redelivery counts
    /// are unchanged. A claim whose generation is answered (a live terminal
    /// marker) is dropped instead, with its redelivery count: returned, it
    /// would be served again once the marker expired. True where a claim of
    /// `by`'s ended, false where `by` held none.
    async fn release(&self, by: Holder<'_>, generations: &[Generation]) -> Result<Vec<bool>>;

    /// Moves claims `by` holds into the retry set, due at `due`; a
    /// claim whose generation is answered is dropped instead, nothing
    /// parked (as [`ClaimStore::release`]). True where a claim of
    /// `by`'s ended.
    async fn park_retry(&self, by: Holder<'_>, items: &[ParkItem]) -> Result<Vec<bool>>;

    /// Returns up to `limit` due retries to their queue at their deadline
    /// score (Go-parked entries too). Returns how many moved.
    async fn promote_due(&self, limit: usize) -> Result<usize>;

    /// Handles up to `limit` expired claims of `queue`: back to pending, or at
    /// the delivery limit a `DELIVERY_LIMIT` record and the dead set.
    async fn reclaim_expired(&self, queue: &str, limit: usize) -> Result<ReclaimReport>;

    /// Moves a pending member that cannot be parsed to the dead set with a
    /// reason. False when it was no longer pending.
    async fn dead_letter(&self, queue: &str, member: &Member, reason: &str) -> Result<bool>;
}
