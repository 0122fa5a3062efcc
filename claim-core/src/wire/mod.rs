//! Wire format shared with the Go llm-d-async `redis-sortedset` transport.
//!
//! Pending members (parse, retry stamping, building), result records and key names,
//! one concern per module: `member` reads a pending member, `retry` stamps it
//! for a retry, `result` is the result record, `producer` builds members in
//! the Go producer's shape, `sequence` is the enqueue sequence, the score and
//! the producer's per-request keys, `go_json` writes JSON as Go's `json.Marshal` does,
//! `entries` reads JSON objects without parsing their values and `fields` reads the
//! member's keys in one pass. The modules are
//! private; everything public is re-exported here (`claim_core::wire::X`).
//!
//! Decisions, where the Go code leaves room:
//! - `parse_member` reads routing from `internal` only, as the Go processor does
//!   (its producer copies `data.request_queue_name`/`result_queue_name` there).
//! - JSON `null`, an empty string, and `0` for `created`/`status_code` mean "unset", as in Go.
//! - `deadline`/`created` accept any JSON number; a fraction is floored to whole
//!   seconds (Go rejects it and drops the member). `deadline` must lie in
//!   1..=[`MAX_DEADLINE_SECS`] (year 9999), `created` within as far either side
//!   of the epoch, `result_ttl_seconds` at most [`MAX_RESULT_TTL_SECS`]: every
//!   expiry a store derives from them stays in range.
//! - `internal.payload_ref` may name only the member's own payload key,
//!   `request-payload:<id>:<token>` ([`payload_key`]); any other name is
//!   invalid, so no member can make a store read or delete another key.
//! - A missing payload is invalid; `null` is accepted, as Go accepts it (with
//!   `internal.payload_ref` the payload is stored apart and fetched; without
//!   one, `null` is the body, as Go forwards it).
//! - An id or request token holding a NUL byte cannot be keyed (Go's claim
//!   key is `<id>\0<token>`): such a member goes to the dead set.
//! - The pending score is [`queue_score`]: `deadline + min(seq, 2^21-1)/2^21`.
//! - Keys match exactly; Go would also match `"ID"` to `id`.
//! - Members are written the way Go's `json.Marshal` writes them: struct field
//!   order, sorted map keys, and `<`, `>`, `&`, U+2028, U+2029 escaped.
//! - `stamp_retry` re-writes only the envelope and `internal` objects; every other
//!   value keeps its exact bytes (no numeric round trip), so no `arbitrary_precision`.

mod entries;
mod fields;
mod go_json;
mod go_order;
mod member;
mod member_error;
mod parsed;
mod producer;
mod result;
mod retry;
mod sequence;

pub use member::{lenient_payload_key, member_deadline, parse_member};
pub use member_error::MemberError;
pub use parsed::{MAX_DEADLINE_SECS, MAX_RESULT_TTL_SECS, ParsedMember, RequestKind};
pub use producer::{Envelope, InternalRouting, RequestData};
pub use result::{ErrorCode, PAYLOAD_MISSING_MESSAGE, ResultRecord, UnknownErrorCode};
pub use retry::{stamp_requeue, stamp_retry};
pub use sequence::{
    MAX_ENQUEUE_SEQ, PAYLOAD_GRACE_MS, PAYLOAD_KEY_PREFIX, SEQ_GRACE_SECS, SEQ_KEY_PREFIX,
    SeqTemplate, payload_key, queue_score, seq_key, seq_template,
};

/// Pending sorted set the Go producer writes to by default.
pub const DEFAULT_QUEUE: &str = "request-sortedset";
/// Result list the Go processor pushes to when nothing else is configured.
pub const DEFAULT_RESULT_LIST: &str = "result-list";
/// Sorted set of requests parked for a retry, scored by due time.
pub const DEFAULT_RETRY_SET: &str = "retry-sortedset";
/// Lifetime of a `request-cancel:<id>` marker written by the producer.
pub const CANCEL_MARKER_TTL_SECS: u64 = 7 * 24 * 3600;
/// Prefix of the key holding the active generation's token.
pub const ACTIVE_KEY_PREFIX: &str = "request-active:";
/// Prefix of the key holding the cancelled generation's token.
pub const CANCEL_KEY_PREFIX: &str = "request-cancel:";

/// `request-active:<id>`: the token of the generation the producer submitted last.
pub fn active_key(id: &str) -> String {
    format!("{ACTIVE_KEY_PREFIX}{id}")
}

/// `request-cancel:<id>`: a generation is cancelled when this equals its token.
pub fn cancel_key(id: &str) -> String {
    format!("{CANCEL_KEY_PREFIX}{id}")
}

#[cfg(test)]
mod member_tests;
