//! Stamping a member for a retry: `internal.retry_count` up by one, the queue it goes back to, every other byte kept.

use serde_json::value::RawValue;

use super::entries::{field, object};
use super::go_json::go_json;
use super::go_order::{ENVELOPE_ORDER, INTERNAL_ORDER, Ordered, put};
use super::member::parse_member;
use super::member_error::MemberError;

fn raw(json: Vec<u8>) -> Box<RawValue> {
    let json = String::from_utf8(json).expect("serde_json writes UTF-8");
    RawValue::from_string(json).expect("serde_json writes valid JSON")
}

/// The member with `internal.retry_count` incremented and `internal.request_queue_name`
/// set; every other value keeps its bytes. Fails as [`parse_member`] would.
pub fn stamp_retry(raw_member: &[u8], request_queue_name: &str) -> Result<Vec<u8>, MemberError> {
    let parsed = parse_member(raw_member)?;
    stamp(
        raw_member,
        request_queue_name,
        parsed.retry_count.saturating_add(1),
    )
}

/// The member with `internal.request_queue_name` set and its retry count
/// kept: a request a pool gate sent back (Go's requeue) is not a retry.
pub fn stamp_requeue(raw_member: &[u8], request_queue_name: &str) -> Result<Vec<u8>, MemberError> {
    let parsed = parse_member(raw_member)?;
    stamp(raw_member, request_queue_name, parsed.retry_count)
}

fn stamp(
    raw_member: &[u8],
    request_queue_name: &str,
    retry_count: u32,
) -> Result<Vec<u8>, MemberError> {
    let count = raw(retry_count.to_string().into_bytes());
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
