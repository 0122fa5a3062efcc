//! How a claimed request ends: the settlement (ack a terminal record, or park a retry) the writer carries out, and the groups it sends them in.
//!
//! A leaf: workers and the consumer's dispatch build settlements, the
//! writer and its accounting read them, and nothing here calls back.

use super::routing::Destination;
use crate::handler::Request;
use claim_core::store::{AckItem, ParkItem};
use claim_core::wire::{ErrorCode, ResultRecord};
use std::sync::Arc;
use tokio::time::Instant;

/// How a held claim ends, as the writer carries it out: a terminal record
/// acked, or a retry parked.
#[derive(Debug)]
pub enum Settlement {
    Ack {
        queue: Arc<str>,
        item: AckItem,
        /// The record's error code, or "OK": labels the results metric.
        code: &'static str,
    },
    Park {
        queue: Arc<str>,
        item: ParkItem,
    },
}

impl Settlement {
    /// The ack item, when this is an ack.
    pub(super) fn ack_item(&self) -> Option<&AckItem> {
        match self {
            Settlement::Ack { item, .. } => Some(item),
            Settlement::Park { .. } => None,
        }
    }

    /// The park item, when this is a park.
    pub(super) fn park_item(&self) -> Option<&ParkItem> {
        match self {
            Settlement::Park { item, .. } => Some(item),
            Settlement::Ack { .. } => None,
        }
    }

    /// The held claim this settlement is for.
    pub fn claim(&self) -> (&Arc<str>, &claim_core::Generation) {
        match self {
            Settlement::Ack { queue, item, .. } => (queue, &item.generation),
            Settlement::Park { queue, item } => (queue, &item.generation),
        }
    }

    pub(super) fn lane(&self) -> Lane {
        match self {
            Settlement::Ack { queue, .. } => (queue.clone(), Kind::Ack),
            Settlement::Park { queue, .. } => (queue.clone(), Kind::Park),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Kind {
    Ack,
    Park,
}

/// Fresh settlements of one queue and kind share a lane: one call at a time.
pub(super) type Lane = (Arc<str>, Kind);

/// A settlement the writer still owes, and what its attempts so far showed.
#[derive(Debug)]
pub(super) struct Owed {
    pub settlement: Settlement,
    /// A call carrying it failed with `Indeterminate`: it may have landed.
    pub uncertain: bool,
    /// When a call carrying it first failed.
    pub failing_since: Option<Instant>,
}

/// Items sent (or to be resent) together in one call.
#[derive(Debug)]
pub(super) struct Group {
    pub lane: Lane,
    pub items: Vec<Owed>,
    /// Failed calls so far; drives the backoff.
    pub attempts: u32,
    /// Whether this group came straight from its lane (which it then frees).
    pub fresh: bool,
}

impl Group {
    /// The store items `pick` finds in this group's settlements (all of its lane's kind).
    pub(super) fn items_of<T: Clone>(&self, pick: fn(&Settlement) -> Option<&T>) -> Vec<T> {
        self.items
            .iter()
            .filter_map(|o| pick(&o.settlement))
            .cloned()
            .collect()
    }
}

/// A held claim as its ack names it.
#[derive(Debug)]
pub struct Claimed {
    pub generation: claim_core::Generation,
    /// The member exactly as claimed (`"payload":null` when stored apart).
    pub member: claim_core::Member,
    pub score: claim_core::Score,
    /// The member's `internal.payload_ref`: the owner's ack deletes it.
    pub payload_ref: Option<String>,
}

impl Claimed {
    /// The claim a worker's request stands for.
    pub fn of(request: &Request) -> Claimed {
        Claimed {
            generation: request.generation.clone(),
            member: request.member.clone(),
            score: request.score,
            payload_ref: request.parsed.payload_ref.clone(),
        }
    }
}

/// The settlement of one terminal record; the record names the generation's
/// token, and the ack carries the routing's TTL and the payload key.
pub fn terminal(
    queue: &Arc<str>,
    claimed: Claimed,
    destination: Destination,
    record: ResultRecord,
    code: &'static str,
) -> Settlement {
    let Claimed {
        generation,
        member,
        score,
        payload_ref,
    } = claimed;
    let record = record.with_token(generation.token.as_str());
    let item = AckItem {
        generation,
        member,
        score,
        result_list: destination.list,
        record: record.to_json_bytes().into(),
        payload_ref,
        result_ttl_seconds: destination.ttl_seconds.unwrap_or(0),
    };
    Settlement::Ack {
        queue: queue.clone(),
        item,
        code,
    }
}

/// The settlement of a terminal error record with `code` and `message`.
pub fn error(
    queue: &Arc<str>,
    claimed: Claimed,
    destination: Destination,
    code: ErrorCode,
    message: impl Into<String>,
) -> Settlement {
    let record = ResultRecord::error(&claimed.generation.id, code, message);
    terminal(queue, claimed, destination, record, code.as_str())
}

/// Go's message (and, as `{"error": …}`, payload) when a gate drops a request without a record of its own.
pub const GATE_DROPPED_MESSAGE: &str = "Pool gating dropped request";

/// The record of a request a gate dropped: the gate's own payload verbatim
/// (no code, as Go writes the tier-priority 429), or `GATE_DROPPED`.
pub fn gate_dropped(id: &str, record: Option<crate::gate::GateRecord>) -> ResultRecord {
    match record {
        Some(record) => ResultRecord::success(id, 0, record.payload),
        None => ResultRecord::error(id, ErrorCode::GateDropped, GATE_DROPPED_MESSAGE),
    }
}
