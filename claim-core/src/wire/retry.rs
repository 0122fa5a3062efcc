//! Stamping a member for a retry: `internal.retry_count` up by one, the queue it goes back to, every other byte kept.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::entries::{Entries, field, object};
use super::go_json::go_json;
use super::member::{MemberError, parse_member};

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
    entries.insert(at.min(entries.len()), (key.to_owned(), value));
}

pub(super) struct Ordered<'e, 'a>(pub(super) &'e Entries<'a>);

impl Serialize for Ordered<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

fn raw(json: Vec<u8>) -> Box<RawValue> {
    let json = String::from_utf8(json).expect("serde_json writes UTF-8");
    RawValue::from_string(json).expect("serde_json writes valid JSON")
}

/// The member with `internal.retry_count` incremented and `internal.request_queue_name`
/// set; every other value keeps its bytes. Fails as [`parse_member`] would.
pub fn stamp_retry(raw_member: &[u8], request_queue_name: &str) -> Result<Vec<u8>, MemberError> {
    let parsed = parse_member(raw_member)?;
    let count = raw(parsed
        .retry_count
        .saturating_add(1)
        .to_string()
        .into_bytes());
    let queue = raw(go_json(request_queue_name));
    let not_json = |reason| MemberError::NotJson { reason };
    let text = std::str::from_utf8(raw_member).map_err(|e| not_json(e.to_string()))?;
    let mut top = object(text).map_err(not_json)?;
    let mut internal = match field(&top, "internal") {
        Some(r) => object(r.get()).map_err(not_json)?,
        None => Vec::new(),
    };
    put(&mut internal, "retry_count", &count, INTERNAL_ORDER);
    put(&mut internal, "request_queue_name", &queue, INTERNAL_ORDER);
    let internal = raw(go_json(&Ordered(&internal)));
    put(&mut top, "internal", &internal, ENVELOPE_ORDER);
    Ok(go_json(&Ordered(&top)))
}
