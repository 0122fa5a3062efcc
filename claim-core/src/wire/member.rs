//! Reading a pending member: what the processor needs from it, and why a member cannot be processed.

use super::member_error::MemberError;
use super::parsed::{
    CREATED_SECS, DEADLINE_SECS, MAX_RESULT_TTL_SECS, ParsedMember, own_payload_ref,
};

use std::marker::PhantomData;

use super::entries::{is_object, last_field, read, seconds_of};
use super::fields::{Check, bad, get, present, raw_fields, seconds, string, string_map, text};

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
///
/// The envelope is read in one pass; a member that pass stops on (not
/// JSON, a `data` that is no object, a key no string can hold) is read
/// again object by object, which words the fault as every error here is
/// worded. Either way one set of rules ([`member`]) decides.
pub fn parse_member(raw: &[u8]) -> Result<ParsedMember, MemberError> {
    let not_json = |reason| MemberError::NotJson { reason };
    let text = std::str::from_utf8(raw).map_err(|e| not_json(e.to_string()))?;
    let envelope = match read(text, PhantomData) {
        Ok(envelope) => envelope,
        Err(_) => in_two_passes(text).map_err(not_json)?,
    };
    member(&envelope)
}

/// The member `envelope` holds, or why it cannot be processed.
pub(super) fn member(envelope: &Envelope) -> Result<ParsedMember, MemberError> {
    let Some(data) = &envelope.data else {
        return Err(MemberError::MissingId);
    };
    let id = match present(data.id).map(string) {
        Some(Ok(id)) if !id.is_empty() => id,
        _ => return Err(MemberError::MissingId),
    };
    if id.contains('\0') {
        return Err(MemberError::Unkeyable {
            id,
            field: "data.id",
        });
    }
    match fields(envelope, data) {
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

raw_fields! {
    /// The keys of `data` the processor reads.
    struct Data { id, deadline, created, payload, endpoint, headers, metadata }
}

raw_fields! {
    /// The keys of `internal` the processor reads.
    struct Internal {
        request_token,
        retry_count,
        queue_id,
        request_queue_name,
        result_queue_name,
        result_ttl_seconds,
        result_routing_resolved,
        transport_correlation_id,
        enqueue_seq,
        payload_ref,
        labels,
    }
}

raw_fields! {
    /// The envelope's keys, each kept raw.
    struct Top { request_kind, internal, data }
}

raw_fields! {
    /// The envelope read in one pass, `data` in place (a large payload is
    /// scanned once; the pass stops when `data` is no object) and
    /// `request_kind` and `internal` kept raw (`internal` is read apart, so
    /// a fault in it is answered with the request id, never as "not JSON").
    struct Envelope { request_kind, internal; data: Data }
}

/// The envelope read with `data` kept raw and then read on its own, each
/// object as a whole: where the one pass stops, this says why in the words
/// reading object by object gives (a trailing comma in `data` reads as "key
/// must be a string", as skipping over it finds first), and it still reads
/// a member whose only fault is in an earlier `data` the last one replaces.
pub(super) fn in_two_passes(text: &str) -> Result<Envelope<'_>, String> {
    let top: Top = read(text, PhantomData)?;
    let data = match present(top.data) {
        Some(raw) if is_object(raw) => Some(read(raw.get(), PhantomData)?),
        _ => None,
    };
    Ok(Envelope {
        request_kind: top.request_kind,
        internal: top.internal,
        data,
    })
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

fn fields(top: &Envelope, data: &Data) -> Check<ParsedMember> {
    let missing = |path, expected: &str| Err((path, format!("missing; expected {expected}")));
    let kinds = r#""plain", "redis" or "pubsub""#;
    let Some(request_kind) = get(top.request_kind, "request_kind", kinds)? else {
        return missing("request_kind", kinds);
    };
    let internal: Internal = match present(top.internal) {
        Some(raw) if is_object(raw) => read(raw.get(), PhantomData).map_err(|e| ("internal", e))?,
        Some(raw) => return Err(bad("internal", "an object", raw)),
        None => Internal::default(),
    };
    let retry_count = get(
        internal.retry_count,
        "internal.retry_count",
        "a non-negative integer",
    )?;
    let when = "a positive Unix timestamp in seconds, at most 253402300799 (year 9999)";
    let Some(deadline) = seconds(data.deadline, "data.deadline", when, DEADLINE_SECS)? else {
        return missing("data.deadline", when);
    };
    let created = seconds(
        data.created,
        "data.created",
        "Unix seconds between -253402300799 and 253402300799",
        CREATED_SECS,
    )?;
    let object_or_null = "a JSON object or null";
    // `get` reads `null` as absent; here `null` is a value (stored apart).
    let payload = match data.payload {
        Some(raw) if is_object(raw) || raw.get() == "null" => raw.to_owned(),
        Some(raw) => return Err(bad("data.payload", object_or_null, raw)),
        None => return missing("data.payload", object_or_null),
    };
    let ttl = "a non-negative integer number of seconds, at most 315360000 (ten years)";
    let result_ttl_seconds = get::<u64>(
        internal.result_ttl_seconds,
        "internal.result_ttl_seconds",
        ttl,
    )?;
    if let Some(t) = result_ttl_seconds.filter(|t| *t > MAX_RESULT_TTL_SECS) {
        let path = "internal.result_ttl_seconds";
        return Err((path, format!("expected {ttl}, got {t}")));
    }
    let resolved = get::<bool>(
        internal.result_routing_resolved,
        "internal.result_routing_resolved",
        "a boolean",
    )?;
    let enqueue_seq = get::<i64>(internal.enqueue_seq, "internal.enqueue_seq", "an integer")?;
    Ok(ParsedMember {
        id: String::new(),
        token: text(internal.request_token, "internal.request_token")?.unwrap_or_default(),
        deadline,
        created: created.filter(|c| *c != 0),
        retry_count: retry_count.unwrap_or(0),
        queue_id: text(internal.queue_id, "internal.queue_id")?,
        request_queue_name: text(internal.request_queue_name, "internal.request_queue_name")?,
        result_queue_name: text(internal.result_queue_name, "internal.result_queue_name")?,
        result_ttl_seconds: result_ttl_seconds.filter(|t| *t != 0),
        result_routing_resolved: resolved.unwrap_or(false),
        transport_correlation_id: text(
            internal.transport_correlation_id,
            "internal.transport_correlation_id",
        )?,
        enqueue_seq,
        payload_ref: text(internal.payload_ref, "internal.payload_ref")?,
        labels: string_map(internal.labels, "internal.labels")?,
        endpoint: text(data.endpoint, "data.endpoint")?,
        headers: string_map(data.headers, "data.headers")?,
        metadata: string_map(data.metadata, "data.metadata")?,
        payload,
        request_kind,
    })
}
