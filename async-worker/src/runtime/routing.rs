//! Where a request's result record goes and how long its list is kept: the Go processor's result routing, stamped at poll and read at ack.
//!
//! Go stamps routing into the member at poll (unless the producer marked it
//! resolved: a set queue-config `result_queue_name` overwrites the member's,
//! the config's TTL replaces the member's) and reads it back at ack. We
//! never re-serialize a member, so the same two steps run on a
//! [`MemberRouting`] value and their answer travels in the ack item instead.
//! The choice itself is [`claim_core::routing::route`], the one function
//! the stores use for the records they write themselves.

use crate::config::QueueSpec;
use claim_core::routing::{MemberRoute, QueueRoute};

/// What a member says about its result routing (its `internal` fields).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemberRouting {
    /// `internal.result_routing_resolved`.
    pub resolved: bool,
    /// `internal.queue_id`.
    pub queue_id: Option<String>,
    /// `internal.result_queue_name`.
    pub result_queue_name: Option<String>,
    /// `internal.result_ttl_seconds`; 0 or absent: no expiry.
    pub result_ttl_seconds: u64,
}

/// A record's result list and the `EXPIRE` set on it after the push:
/// claim-core's [`Route`](claim_core::routing::Route), the answer of the
/// one routing function every store uses too.
pub use claim_core::routing::Route as Destination;

impl MemberRouting {
    /// Go's poll-time stamp by the queue `spec` polled: an empty `queue_id`
    /// becomes the spec's; unless resolved, a set spec `result_queue_name`
    /// overwrites the member's, the spec's TTL (none when unset) replaces
    /// the member's, and the routing is resolved.
    pub fn stamped(mut self, spec: &QueueSpec) -> Self {
        if self.queue_id.as_deref().is_none_or(str::is_empty) {
            self.queue_id = Some(spec.id.clone());
        }
        if !self.resolved {
            if let Some(list) = spec.result_queue_name.as_deref().filter(|l| !l.is_empty()) {
                self.result_queue_name = Some(list.to_owned());
            }
            self.result_ttl_seconds = spec.result_ttl_seconds.unwrap_or(0);
            self.resolved = true;
        }
        self
    }

    /// Go's ack-time choice: (a) resolved: the member's list and TTL;
    /// (b) unresolved with `config` (the queue config named by `queue_id`):
    /// the config's list, else the member's, and the config's TTL;
    /// (c) otherwise the member's list and no TTL. Each list falls back to
    /// `default_list` (the transport's `result_queue_name`).
    pub fn destination(&self, config: Option<&QueueSpec>, default_list: &str) -> Destination {
        let member = MemberRoute {
            resolved: self.resolved,
            result_queue_name: self.result_queue_name.as_deref(),
            result_ttl_seconds: self.result_ttl_seconds,
        };
        let queue = config.map(|c| QueueRoute {
            result_queue_name: c.result_queue_name.as_deref(),
            result_ttl_seconds: c.result_ttl_seconds,
        });
        claim_core::routing::route(Some(member), queue, default_list)
    }
}

/// The destination of a member polled from `spec`: stamped as Go stamps it
/// at poll, then chosen as Go chooses at ack.
pub fn at_poll(routing: MemberRouting, spec: &QueueSpec, default_list: &str) -> Destination {
    routing.stamped(spec).destination(Some(spec), default_list)
}

#[cfg(test)]
#[path = "routing_tests.rs"]
mod tests;
