//! Reading a pending member: what the processor needs from it, and why a member cannot be processed.

use super::member_error::MemberError;
use super::parsed::{
    CREATED_SECS, DEADLINE_SECS, MAX_RESULT_TTL_SECS, ParsedMember, own_payload_ref,
};

use super::entries::{
    Check, Entries, bad, field, get, is_object, last_field, object, seconds, seconds_of,
    string_map, text,
};

/// The member's `data.deadline` as the stores read it for leases and
/// terminal markers ([`crate::lease`]): any JSON number, a fraction floored,
/// in `1..=MAX_DEADLINE_SECS`; `None` when the member is not a JSON object,
/// has no `data` object, or its deadline is missing, not a number or out of
/// range. Only this field is read (the rest of the member may be invalid:
/// the runtime answers that), so a Lua script decoding the member with
/// cjson reads the same value (`lib.lua`, `member_deadline`).
pub fn member_deadline(raw: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(raw).ok()?;
    let data = last_field(text, "data").ok()??;
    let deadline = last_field(data.get(), "deadline").ok()??;
    seconds_of(deadline, DEADLINE_SECS)
}

/// Parses a pending member without changing it.
pub fn parse_member(raw: &[u8]) -> Result<ParsedMember, MemberError> {
    let not_json = |reason| MemberError::NotJson { reason };
    let text = std::str::from_utf8(raw).map_err(|e| not_json(e.to_string()))?;
    match super::one_pass::parse(text) {
        Some(parsed) => Ok(parsed),
        None => parse_text(text),
    }
}

/// [`parse_member`] of a member's text by its entries: what decides every
/// member the one-pass reader does not take (`one_pass.rs` says which),
/// and every error.
pub(super) fn parse_text(text: &str) -> Result<ParsedMember, MemberError> {
    let not_json = |reason| MemberError::NotJson { reason };
    let top = object(text).map_err(not_json)?;
    let data = match field(&top, "data") {
        Some(d) if is_object(d) => object(d.get()).map_err(not_json)?,
        _ => return Err(MemberError::MissingId),
    };
    let id = match field(&data, "id").map(|r| serde_json::from_str::<String>(r.get())) {
        Some(Ok(id)) if !id.is_empty() => id,
        _ => return Err(MemberError::MissingId),
    };
    if id.contains('\0') {
        return Err(MemberError::Unkeyable {
            id,
            field: "data.id",
        });
    }
    match fields(&top, &data) {
        Ok(parsed) if parsed.token.contains('\0') => Err(MemberError::Unkeyable {
            id,
            field: "internal.request_token",
        }),
        Ok(parsed) => match own_payload_ref(&id, &parsed.token, parsed.payload_ref.as_deref()) {
            Ok(()) => Ok(ParsedMember { id, ..parsed }),
            Err(reason) => Err(MemberError::Invalid {
                id,
                field: "internal.payload_ref",
                reason,
            }),
        },
        Err((field, reason)) => Err(MemberError::Invalid { id, field, reason }),
    }
}

/// The payload key of a member whose fields did not all parse, read as
/// loosely as possible: its own `request-payload:<id>:<token>` when the
/// member names exactly that key, else `None` (no key is read or deleted
/// for a member that names another one).
pub fn lenient_payload_key(id: &str, token: &str, named: Option<&str>) -> Option<String> {
    named
        .filter(|n| own_payload_ref(id, token, Some(n)).is_ok())
        .map(str::to_owned)
}

fn fields(top: &Entries, data: &Entries) -> Check<ParsedMember> {
    let missing = |path, expected: &str| Err((path, format!("missing; expected {expected}")));
    let kinds = r#""plain", "redis" or "pubsub""#;
    let Some(request_kind) = get(top, "request_kind", kinds)? else {
        return missing("request_kind", kinds);
    };
    let internal = match field(top, "internal") {
        Some(raw) if is_object(raw) => object(raw.get()).map_err(|e| ("internal", e))?,
        Some(raw) => return Err(bad("internal", "an object", raw)),
        None => Vec::new(),
    };
    let retry_count = get(&internal, "internal.retry_count", "a non-negative integer")?;
    let when = "a positive Unix timestamp in seconds, at most 253402300799 (year 9999)";
    let Some(deadline) = seconds(data, "data.deadline", when, DEADLINE_SECS)? else {
        return missing("data.deadline", when);
    };
    let created = seconds(
        data,
        "data.created",
        "Unix seconds between -253402300799 and 253402300799",
        CREATED_SECS,
    )?;
    let object_or_null = "a JSON object or null";
    // `field` reads `null` as absent; here `null` is a value (stored apart).
    let payload = match data.iter().rev().find(|(k, _)| k == "payload") {
        Some((_, raw)) if is_object(raw) || raw.get() == "null" => (*raw).to_owned(),
        Some((_, raw)) => return Err(bad("data.payload", object_or_null, raw)),
        None => return missing("data.payload", object_or_null),
    };
    let ttl = "a non-negative integer number of seconds, at most 315360000 (ten years)";
    let result_ttl_seconds = get::<u64>(&internal, "internal.result_ttl_seconds", ttl)?;
    if let Some(t) = result_ttl_seconds.filter(|t| *t > MAX_RESULT_TTL_SECS) {
        let path = "internal.result_ttl_seconds";
        return Err((path, format!("expected {ttl}, got {t}")));
    }
    let resolved = get::<bool>(&internal, "internal.result_routing_resolved", "a boolean")?;
    let enqueue_seq = get::<i64>(&internal, "internal.enqueue_seq", "an integer")?;
    Ok(ParsedMember {
        id: String::new(),
        token: text(&internal, "internal.request_token")?.unwrap_or_default(),
        deadline,
        created: created.filter(|c| *c != 0),
        retry_count: retry_count.unwrap_or(0),
        queue_id: text(&internal, "internal.queue_id")?,
        request_queue_name: text(&internal, "internal.request_queue_name")?,
        result_queue_name: text(&internal, "internal.result_queue_name")?,
        result_ttl_seconds: result_ttl_seconds.filter(|t| *t != 0),
        result_routing_resolved: resolved.unwrap_or(false),
        transport_correlation_id: text(&internal, "internal.transport_correlation_id")?,
        enqueue_seq,
        payload_ref: text(&internal, "internal.payload_ref")?,
        labels: string_map(&internal, "internal.labels")?,
        endpoint: text(data, "data.endpoint")?,
        headers: string_map(data, "data.headers")?,
        metadata: string_map(data, "data.metadata")?,
        payload,
        request_kind,
    })
}
