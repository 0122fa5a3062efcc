//! Writing a member back in Go's field order: the order of the envelope and of `internal`, and a map that serializes its entries as they stand.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::entries::{Entries, field, is_object, object};
use super::go_json::go_json;
use super::member_error::MemberError;

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

/// JSON that serde_json wrote, as a raw value to splice in.
pub(super) fn raw(json: Vec<u8>) -> Box<RawValue> {
    let json = String::from_utf8(json).expect("serde_json writes UTF-8");
    RawValue::from_string(json).expect("serde_json writes valid JSON")
}

/// `member` with `fields` set in its `internal` object (each in place, else
/// where Go's field order puts it; `internal` added when missing), written
/// back in Go's order; every other value keeps its bytes. Fails when the
/// member is not a JSON object or its `internal` is not one.
pub(super) fn restamp(member: &[u8], fields: &[(&str, &RawValue)]) -> Result<Vec<u8>, MemberError> {
    let not_json = |reason| MemberError::NotJson { reason };
    let text = std::str::from_utf8(member).map_err(|e| not_json(e.to_string()))?;
    let mut top = object(text).map_err(not_json)?;
    let mut internal = match field(&top, "internal") {
        Some(r) if is_object(r) => object(r.get()).map_err(not_json)?,
        Some(_) => return Err(not_json("internal is not an object".into())),
        None => Vec::new(),
    };
    for (key, value) in fields {
        put(&mut internal, key, value, INTERNAL_ORDER);
    }
    let internal = raw(go_json(&Ordered(&internal)));
    put(&mut top, "internal", &internal, ENVELOPE_ORDER);
    Ok(go_json(&Ordered(&top)))
}

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
