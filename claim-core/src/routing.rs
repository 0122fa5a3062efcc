//! The one routing function: the result list and list TTL of every record of a generation (handler answer, deadline, cancel, `DELIVERY_LIMIT`, `PAYLOAD_UNAVAILABLE`, `INVALID_REQUEST`), by Go's routing, and the optional result-list allow-list.
//!
//! Go (upstream §7) stamps routing into a member at poll and reads it back
//! at ack: a member marked `result_routing_resolved` keeps its own
//! `result_queue_name` and `result_ttl_seconds`; otherwise the queue
//! config's `result_queue_name`, when set, wins over the member's, and the
//! config's TTL replaces the member's. Every list falls back to the
//! transport's `result_queue_name`. [`route`] is that rule, once: the
//! runtime calls it for the records it writes, every store calls it (via
//! [`crate::store::StoreConfig::route`]) for the records it writes itself,
//! so a generation's records all land on one list whoever writes them.

use crate::wire::{self, ParsedMember};

/// The longest list TTL a record sets: 10 years, the longest
/// `result_ttl_seconds` a member may carry ([`wire::MAX_RESULT_TTL_SECS`]:
/// the parse refuses more). A TTL above it that reaches a store anyway (a
/// library caller's ack item, up to `u64::MAX`, which Redis's `EXPIRE`
/// refuses after the push) is clamped to it.
pub const MAX_RESULT_TTL_SECONDS: u64 = wire::MAX_RESULT_TTL_SECS;

/// `seconds` as a list TTL a store sets: at most [`MAX_RESULT_TTL_SECONDS`]
/// (every store clamps an ack item's `result_ttl_seconds` with this).
pub fn clamp_ttl(seconds: u64) -> u64 {
    seconds.min(MAX_RESULT_TTL_SECONDS)
}

/// What a member says about its routing (its `internal` fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemberRoute<'a> {
    /// `internal.result_routing_resolved`.
    pub resolved: bool,
    /// `internal.result_queue_name`; empty counts as unset.
    pub result_queue_name: Option<&'a str>,
    /// `internal.result_ttl_seconds`; 0: no expiry.
    pub result_ttl_seconds: u64,
}

impl<'a> MemberRoute<'a> {
    /// The routing fields of a parsed member.
    pub fn of(parsed: &'a ParsedMember) -> Self {
        MemberRoute {
            resolved: parsed.result_routing_resolved,
            result_queue_name: parsed.result_queue_name.as_deref(),
            result_ttl_seconds: parsed.result_ttl_seconds.unwrap_or(0),
        }
    }
}

/// What the configuration of the member's queue says (queue config
/// `result_queue_name`, `result_ttl_seconds`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueRoute<'a> {
    /// Empty counts as unset.
    pub result_queue_name: Option<&'a str>,
    /// `None` or 0: no expiry.
    pub result_ttl_seconds: Option<u64>,
}

/// A record's result list and the `EXPIRE` set on it after the push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub list: String,
    /// Seconds; `None` sets no expiry.
    pub ttl_seconds: Option<u64>,
}

impl Route {
    /// The TTL as the stores take it: 0 sets no expiry.
    pub fn ttl_or_zero(&self) -> u64 {
        self.ttl_seconds.unwrap_or(0)
    }
}

impl From<&str> for Route {
    /// `list`, without an expiry.
    fn from(list: &str) -> Self {
        Route {
            list: list.to_owned(),
            ttl_seconds: None,
        }
    }
}

/// Go's routing: (a) a resolved member: its own list and TTL; (b) an
/// unresolved one with its queue's config: the config's list, else its
/// own, and the config's TTL; (c) otherwise its own list and no TTL. Each
/// list falls back to `default_list` (the transport's `result_queue_name`);
/// the TTL is at most [`MAX_RESULT_TTL_SECONDS`]. `member` is `None` for
/// a member unreadable beyond its id: it routes as an unresolved member
/// naming nothing.
pub fn route(
    member: Option<MemberRoute<'_>>,
    queue: Option<QueueRoute<'_>>,
    default_list: &str,
) -> Route {
    let set = |l: Option<&str>| l.filter(|l| !l.is_empty()).map(str::to_owned);
    let member = member.unwrap_or_default();
    let own = set(member.result_queue_name);
    let (list, ttl) = match (member.resolved, queue) {
        (true, _) => (own, member.result_ttl_seconds),
        (false, Some(queue)) => (
            set(queue.result_queue_name).or(own),
            queue.result_ttl_seconds.unwrap_or(0),
        ),
        (false, None) => (own, 0),
    };
    Route {
        list: list.unwrap_or_else(|| default_list.to_owned()),
        ttl_seconds: Some(clamp_ttl(ttl)).filter(|t| *t > 0),
    }
}

/// The optional result-list allow-list (`allowed_result_lists`): exact
/// names and `prefix*` patterns. Off unless configured (Go has none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<String>,
}

impl AllowList {
    /// The allow-list of these entries, or why one is malformed: an entry
    /// is a non-empty name, or a prefix followed by one `*` at its end.
    pub fn new(entries: Vec<String>) -> Result<Self, String> {
        for entry in &entries {
            let body = entry.strip_suffix('*').unwrap_or(entry);
            if entry.is_empty() {
                return Err(
                    "an allowed_result_lists entry is empty: give a list name or a \
                            prefix followed by *"
                        .to_owned(),
                );
            }
            if body.contains('*') {
                return Err(format!(
                    "allowed_result_lists entry \"{entry}\" has a * before its end: only a \
                     trailing * (a prefix pattern) is supported"
                ));
            }
        }
        Ok(AllowList { entries })
    }

    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// Whether `list` is an entry, or starts with the prefix of a `prefix*` entry.
    pub fn allows(&self, list: &str) -> bool {
        self.entries.iter().any(|e| match e.strip_suffix('*') {
            Some(prefix) => list.starts_with(prefix),
            None => e == list,
        })
    }
}

#[cfg(test)]
#[path = "routing_tests.rs"]
mod tests;
