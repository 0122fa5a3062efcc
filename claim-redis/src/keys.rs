//! The Redis key layout: every key the store touches is derived here, from the prefix and names.
//!
//! With the production prefix (empty) the keys are exactly the Go
//! producer's and consumer's: the pending set is the queue name itself,
//! `request-active:<id>` and `request-cancel:<id>` are the producer's, and
//! result lists are the configured names. Tests use a random prefix
//! (`test:<random>:`) so many stores share one server without meeting.
//!
//! Scripts receive every key in `KEYS` and never build a key name
//! themselves. A Redis Cluster layout would change only [`QueueKeys::new`]:
//! name the bookkeeping keys `{<queue>}:claimed` and so on, and either
//! hash-tag the pending key too or keep it plain and rely on `<queue>`
//! already hashing to the slot of `{<queue>}` (a key without braces hashes
//! by its whole name, and `{<queue>}:x` by `<queue>`, so both land in one
//! slot). Markers, producer keys and result lists would then need the same
//! tag per queue; no script changes.

use claim_core::Generation;
use claim_core::keys::bookkeeping;
use claim_core::wire;
use std::fmt;

pub use claim_core::keys::MARKER_PREFIX;

/// Store-wide keys (retry set, markers, producer keys, result lists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    prefix: String,
    retry: String,
}

impl Keys {
    pub fn new(prefix: &str, retry_set: &str) -> Self {
        Keys {
            prefix: prefix.to_owned(),
            retry: format!("{prefix}{retry_set}"),
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// One queue's keys.
    pub fn queue(&self, queue: &str) -> QueueKeys {
        QueueKeys::new(&self.prefix, queue)
    }

    /// The shared retry set (Go: `retry-sortedset`).
    pub fn retry(&self) -> &str {
        &self.retry
    }

    /// `result-terminal:<len(id)>:<id>:<token>`: the generation's terminal marker.
    pub fn marker(&self, generation: &Generation) -> String {
        self.marker_key(generation).to_string()
    }

    /// `request-active:<id>`: the token the producer submitted last.
    pub fn active(&self, id: &str) -> String {
        self.active_key(id).to_string()
    }

    /// `request-cancel:<id>`: the token a cancel targets.
    pub fn cancel(&self, id: &str) -> String {
        self.cancel_key(id).to_string()
    }

    /// [`Keys::marker`], written where it is displayed (no String of its own):
    /// the hot path writes thousands of keys per call straight into the command.
    pub(crate) fn marker_key<'a>(&'a self, generation: &'a Generation) -> impl fmt::Display + 'a {
        Joined(&self.prefix, MARKER_PREFIX, GenerationKey(generation))
    }

    /// [`Keys::active`], written where it is displayed.
    pub(crate) fn active_key<'a>(&'a self, id: &'a str) -> impl fmt::Display + 'a {
        Joined(&self.prefix, wire::ACTIVE_KEY_PREFIX, id)
    }

    /// [`Keys::cancel`], written where it is displayed.
    pub(crate) fn cancel_key<'a>(&'a self, id: &'a str) -> impl fmt::Display + 'a {
        Joined(&self.prefix, wire::CANCEL_KEY_PREFIX, id)
    }

    /// A payload stored apart, at a member's `internal.payload_ref`
    /// (`request-payload:<id>:<token>`), with the prefix.
    pub fn payload(&self, payload_ref: &str) -> String {
        format!("{}{payload_ref}", self.prefix)
    }

    /// `request-seq:<queue>:<deadline>`: the enqueue counter of one queue
    /// and deadline.
    pub fn seq(&self, queue: &str, deadline: i64) -> String {
        format!("{}{}", self.prefix, wire::seq_key(queue, deadline))
    }

    /// A result list.
    pub fn list(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Explicit-time mode only: logical expiries of producer keys (field =
    /// key name, value = expiry ms), since Redis expires keys on its own
    /// clock. Never written when time comes from the server.
    pub fn clock_side(&self) -> String {
        format!("{}claim-redis:explicit-time-expiry", self.prefix)
    }
}

/// `<prefix><part><rest>`, displayed without building a String.
struct Joined<'a, T>(&'a str, &'a str, T);

impl<T: fmt::Display> fmt::Display for Joined<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.0, self.1, self.2)
    }
}

/// [`Generation::key`], `<len(id)>:<id>:<token>`, displayed without building a String.
pub(crate) struct GenerationKey<'a>(pub &'a Generation);

impl fmt::Display for GenerationKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = self.0;
        write!(f, "{}:{}:{}", g.id.len(), g.id, g.token)
    }
}

/// One queue's keys. The pending key is the queue name itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueKeys {
    /// Sorted set of pending members, scored by `wire::queue_score`
    /// (deadline plus the enqueue-sequence fraction).
    pub pending: String,
    /// Hash: claim key (`<id>\0<token>`, Go's) → member bytes.
    pub claimed: String,
    /// Hash: claim key → `owner|score|redeliveries` (ours) or a bare owner token (Go's).
    pub owners: String,
    /// Sorted set: claim key, scored by lease expiry (Unix seconds, ms precision).
    pub index: String,
    /// Hash: claim key → redelivery count, for generations back in
    /// pending or parked after an expired lease.
    pub deliveries: String,
    /// Hash: member → `{"reason":..,"at_ms":..}`.
    pub dead: String,
    /// String: present while an operator has paused claiming from the queue
    /// (`async-worker admin pause`); every replica reads it once per poll interval.
    pub paused: String,
}

impl QueueKeys {
    /// The names come from [`claim_core::keys::bookkeeping`], the one
    /// list the startup collision check and the model use too.
    pub fn new(prefix: &str, queue: &str) -> Self {
        let [claimed, owners, index, deliveries, dead] =
            bookkeeping(queue).map(|name| format!("{prefix}{name}"));
        QueueKeys {
            pending: format!("{prefix}{queue}"),
            claimed,
            owners,
            index,
            deliveries,
            dead,
            paused: format!("{prefix}{queue}:paused"),
        }
    }

    /// Pending, claimed, owners, index, deliveries and dead, in that order:
    /// the first six KEYS of `lua/ack.lua` and `lua/reclaim.lua`.
    pub fn all(&self) -> [&str; 6] {
        [
            &self.pending,
            &self.claimed,
            &self.owners,
            &self.index,
            &self.deliveries,
            &self.dead,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn production_keys_match_the_go_layout_exactly() {
        let keys = Keys::new("", "retry-sortedset");
        let q = keys.queue("request-sortedset");
        assert_eq!(q.pending, "request-sortedset");
        assert_eq!(q.claimed, "request-sortedset:claimed");
        assert_eq!(q.owners, "request-sortedset:claim-owners");
        assert_eq!(q.index, "request-sortedset:claims-idx");
        assert_eq!(q.dead, "request-sortedset:dead");
        assert_eq!(keys.retry(), "retry-sortedset");
        assert_eq!(keys.active("abc"), "request-active:abc");
        assert_eq!(keys.cancel("abc"), "request-cancel:abc");
        assert_eq!(keys.list("result-list"), "result-list");
        let g = Generation::new("a:b", "t");
        assert_eq!(keys.marker(&g), "result-terminal:3:a:b:t");
    }

    #[test]
    fn keys_written_in_place_equal_the_keys_built_as_strings() {
        let keys = Keys::new("p:", "retry");
        let g = Generation::new("i:d", "t|k");
        assert_eq!(GenerationKey(&g).to_string(), g.key());
        assert_eq!(keys.marker(&g), format!("p:{MARKER_PREFIX}{}", g.key()));
        assert_eq!(keys.active("i:d"), format!("p:{}", wire::active_key("i:d")));
        assert_eq!(keys.cancel("i:d"), format!("p:{}", wire::cancel_key("i:d")));
    }

    #[test]
    fn a_prefix_applies_to_every_key() {
        let keys = Keys::new("test:x:", "retry");
        let q = keys.queue("q");
        for key in [
            &q.pending,
            &q.claimed,
            &q.owners,
            &q.index,
            &q.deliveries,
            &q.dead,
        ] {
            assert!(key.starts_with("test:x:q"), "{key}");
        }
        assert_eq!(keys.retry(), "test:x:retry");
        assert!(keys.clock_side().starts_with("test:x:"));
        assert!(
            keys.marker(&Generation::new("i", "t"))
                .starts_with("test:x:result-terminal:")
        );
    }
}
