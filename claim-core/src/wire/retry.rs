//! Stamping a member for a retry: `internal.retry_count` up by one, the queue it goes back to, every other byte kept.

use super::go_json::go_json;
use super::go_order::{raw, restamp};
use super::member::parse_member;
use super::member_error::MemberError;

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
    // parse_member has refused an `internal` that is not an object.
    restamp(
        raw_member,
        &[("retry_count", &count), ("request_queue_name", &queue)],
    )
}
