//! What a parsed member holds (`ParsedMember`, `RequestKind`), the bounds its numbers are held to and the one payload key it may name: shared by the full parser and its one-pass fast path.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::entries::shortened;
use super::sequence::{payload_key, queue_score};
use crate::types::Score;

/// The envelope's `request_kind`: which Go request type `data` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RequestKind {
    /// `plain`: a bare request message.
    Plain,
    /// `redis`: what the Go Redis producers write.
    #[default]
    Redis,
    /// `pubsub`: a message that came through GCP Pub/Sub.
    PubSub,
}

impl RequestKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestKind::Plain => "plain",
            RequestKind::Redis => "redis",
            RequestKind::PubSub => "pubsub",
        }
    }
}

/// What the processor needs from a pending member; the raw bytes stay authoritative.
#[derive(Debug, Clone)]
pub struct ParsedMember {
    /// `data.id`, never empty.
    pub id: String,
    /// `internal.request_token`, empty when absent (pre-token producers).
    pub token: String,
    /// `data.deadline`, Unix seconds, at least 1.
    pub deadline: i64,
    /// `data.created`, Unix seconds; `None` when absent or 0.
    pub created: Option<i64>,
    /// `internal.retry_count`, 0 when absent.
    pub retry_count: u32,
    /// `internal.queue_id`.
    pub queue_id: Option<String>,
    /// `internal.request_queue_name`.
    pub request_queue_name: Option<String>,
    /// `internal.result_queue_name`.
    pub result_queue_name: Option<String>,
    /// `internal.result_ttl_seconds`: `EXPIRE` the result list for this long
    /// after a push; `None` when absent or 0. Negative is invalid.
    pub result_ttl_seconds: Option<u64>,
    /// `internal.result_routing_resolved`: the result queue and TTL in
    /// `internal` were already resolved against the queue config.
    pub result_routing_resolved: bool,
    /// `internal.transport_correlation_id`.
    pub transport_correlation_id: Option<String>,
    /// `internal.enqueue_seq`, as written (0 and negative kept; the score
    /// treats them as absent).
    pub enqueue_seq: Option<i64>,
    /// `internal.payload_ref`: the key holding the payload stored apart
    /// (`request-payload:<id>:<token>`); `None` when absent or empty.
    pub payload_ref: Option<String>,
    /// `internal.labels`.
    pub labels: BTreeMap<String, String>,
    /// `data.endpoint`.
    pub endpoint: Option<String>,
    /// `data.headers`.
    pub headers: BTreeMap<String, String>,
    /// `data.metadata`.
    pub metadata: BTreeMap<String, String>,
    /// `data.payload`, a JSON object or `null`, byte for byte as in the
    /// member. `null` when the payload is stored apart ([`Self::payload_ref`]).
    pub payload: Box<RawValue>,
    /// `request_kind`.
    pub request_kind: RequestKind,
}

impl ParsedMember {
    /// The member's pending score: [`super::queue_score`] of its deadline
    /// and enqueue sequence.
    pub fn score(&self) -> Score {
        queue_score(self.deadline, self.enqueue_seq)
    }

    /// True when `data.payload` is JSON `null`.
    pub fn payload_is_null(&self) -> bool {
        self.payload.get() == "null"
    }
}

/// The latest deadline a member may carry: 9999-12-31T23:59:59Z, in Unix
/// seconds. Every expiry a store computes from a deadline (lease, terminal
/// marker, payload and sequence keys) stays far inside what Redis's `PX`
/// and a double's integer range hold (2.5e14 ms < 2^53); a member beyond it
/// is answered `INVALID_REQUEST`.
pub const MAX_DEADLINE_SECS: i64 = 253_402_300_799;

/// The `data.deadline` a member may carry, in Unix seconds.
pub(super) const DEADLINE_SECS: std::ops::RangeInclusive<i64> = 1..=MAX_DEADLINE_SECS;

/// The `data.created` a member may carry, in Unix seconds.
pub(super) const CREATED_SECS: std::ops::RangeInclusive<i64> =
    -MAX_DEADLINE_SECS..=MAX_DEADLINE_SECS;

/// The longest `internal.result_ttl_seconds` a member may ask for: ten
/// years. Redis refuses an `EXPIRE` whose end overflows its clock, and that
/// refusal would come after the record's push.
pub const MAX_RESULT_TTL_SECS: u64 = 10 * 365 * 24 * 3600;

/// The only payload key a member may name is its own generation's,
/// `request-payload:<id>:<request_token>` (what the Go producer writes): a
/// member naming any other key (a queue, the retry set, a result list,
/// another request's payload) would have the store read and delete it.
pub(super) fn own_payload_ref(
    id: &str,
    token: &str,
    payload_ref: Option<&str>,
) -> Result<(), String> {
    match payload_ref {
        None => Ok(()),
        Some(named) if named == payload_key(id, token) => Ok(()),
        Some(named) => Err(format!(
            "names the key {:?}; a member may reference only its own payload key {:?}",
            shortened(named, 80),
            payload_key(id, token)
        )),
    }
}
