//! Writing a member back in Go's field order: the order of the envelope and of `internal`, and a map that serializes its entries as they stand.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::entries::Entries;

/// Go's write order of the envelope's top-level fields.
pub(super) const ENVELOPE_ORDER: &[&str] = &["internal", "request_kind", "data"];
/// Go's write order of `internal` (`InternalRouting`).
pub(super) const INTERNAL_ORDER: &[&str] = &[
    "retry_count",
    "queue_id",
    "request_token",
    "dispatch_epoch",
    "dispatch_attempt",
    "request_queue_name",
    "result_queue_name",
    "result_ttl_seconds",
    "result_routing_resolved",
    "transport_correlation_id",
    "enqueue_seq",
    "payload_ref",
    "labels",
];

/// Sets `key`: in place when present, else where Go's struct order puts it.
pub(super) fn put<'a>(entries: &mut Entries<'a>, key: &str, value: &'a RawValue, order: &[&str]) {
    let rank = |k: &str| order.iter().position(|o| *o == k);
    let at = entries
        .iter()
        .position(|(k, _)| k == key)
        .unwrap_or_else(|| {
            entries
                .iter()
                .position(|(k, _)| rank(k) > rank(key))
                .unwrap_or(entries.len())
        });
    entries.retain(|(k, _)| k != key);
    entries.insert(at.min(entries.len()), (key.to_owned().into(), value));
}

pub(super) struct Ordered<'e, 'a>(pub(super) &'e Entries<'a>);

impl Serialize for Ordered<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}
