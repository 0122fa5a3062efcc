//! Which per-queue counter an event counts in: the one name the recording helper and the queue handles share.

/// A per-queue counter that counts events of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QueueCount {
    /// First attempts claimed.
    Requests,
    /// Requests handed to the handler, retries included.
    Dispatched,
    /// Retries parked.
    Retries,
    /// Pending copies dropped at claim time: their generation already had a record or a live claim.
    PendingDuplicatesDropped,
    /// Acks resent after an uncertain attempt that turned out to have landed.
    RetriedAcksLanded,
    /// Claims whose lease expired (redeliveries and dead letters).
    ClaimsExpired,
    /// Records not pushed because the generation already had one.
    DuplicatesSuppressed,
    /// Claims found held by another owner at renewal, or run out while the store was unreachable.
    LeaseLost,
}
