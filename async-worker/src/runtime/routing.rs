//! Where a request's result record goes and how long its list is kept: the Go processor's result routing, stamped at poll and read at ack, answered once at poll.
//!
//! Go stamps routing into the member at poll (unless the producer marked it
//! resolved: a set queue-config `result_queue_name` overwrites the member's,
//! the config's TTL replaces the member's) and reads it back at ack, where a
//! stamped member is resolved and keeps what the stamp wrote. We never
//! re-serialize a member, so the answer is taken at poll and travels in the
//! ack item instead. The choice itself is
//! [`claim_core::routing::route`], the one function the stores use for the
//! records they write themselves; the tests keep Go's two steps as Go runs
//! them and check [`at_poll`] against them.

use crate::config::QueueSpec;
use claim_core::routing::{MemberRoute, QueueRoute};

/// A record's result list and the `EXPIRE` set on it after the push:
/// claim-core's [`Route`](claim_core::routing::Route), the answer of the
/// one routing function every store uses too.
pub use claim_core::routing::Route as Destination;

/// What the config of the queue polled says about routing, borrowed from it.
pub(super) fn queue_route(spec: &QueueSpec) -> QueueRoute<'_> {
    QueueRoute {
        result_queue_name: spec.result_queue_name.as_deref(),
        result_ttl_seconds: spec.result_ttl_seconds,
    }
}

/// The destination of a member polled from `spec`, as Go's stamp at poll
/// followed by its choice at ack decides it. Stamping an unresolved member
/// with the config, then reading it resolved, answers as reading it
/// unresolved against that config: so `spec` is passed as the queue config
/// and nothing is copied per request but the list's name in the answer.
pub fn at_poll(member: MemberRoute<'_>, spec: &QueueSpec, default_list: &str) -> Destination {
    claim_core::routing::route(Some(member), Some(queue_route(spec)), default_list)
}

#[cfg(test)]
#[path = "routing_tests.rs"]
mod tests;
