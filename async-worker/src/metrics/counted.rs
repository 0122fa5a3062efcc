//! Which per-queue counter an event counts in: the one list the recording helper and the queue handles share, each counter with its name.

use super::names::*;

/// Declares [`QueueCount`] and its names from one list, so a handle's
/// counter is found by index, not by a match kept beside the enum.
macro_rules! queue_counts {
    ($($(#[$doc:meta])* $variant:ident = $name:ident,)*) => {
        /// A per-queue counter that counts events of one kind.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum QueueCount {
            $($(#[$doc])* $variant,)*
        }

        impl QueueCount {
            /// Each counter's metric name, indexed by the counter as `usize`.
            pub(super) const NAMES: [&'static str; [$($name),*].len()] = [$($name),*];
        }
    };
}

queue_counts! {
    /// First attempts claimed.
    Requests = REQUESTS,
    /// Requests handed to the handler, retries included.
    Dispatched = DISPATCHED,
    /// Retries parked.
    Retries = RETRIES,
    /// Pending copies dropped at claim time: their generation already had a record or a live claim.
    PendingDuplicatesDropped = PENDING_DUPLICATES_DROPPED,
    /// Acks resent after an uncertain attempt that turned out to have landed.
    RetriedAcksLanded = RETRIED_ACKS_LANDED,
    /// Claims whose lease expired (redeliveries and dead letters).
    ClaimsExpired = CLAIMS_EXPIRED,
    /// Records not pushed because the generation already had one.
    DuplicatesSuppressed = DUPLICATES_SUPPRESSED,
    /// Claims found held by another owner at renewal, or run out while the store was unreachable.
    LeaseLost = LEASE_LOST,
    /// Gateway answers 429 (counted by `http_handler` only; without it the
    /// series is still created at 0, so the chart's queries find it).
    #[cfg_attr(not(feature = "http-handler"), allow(dead_code))]
    Shedded = SHEDDED,
    /// Requests a pool gate kept waiting too long, back in their queue.
    GateWaitRequeues = GATE_WAIT_REQUEUES,
}
