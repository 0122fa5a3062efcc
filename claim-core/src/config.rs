//! Store-wide settings, their bounds, the routing of the records a store writes itself, and the names a result list must not have.

use crate::keys::role_of;
use crate::routing::{AllowList, MemberRoute, QueueRoute, Route, route};
use crate::wire::{self, ParsedMember};
use std::collections::BTreeMap;

/// The shortest claim lease: heartbeats run every lease / 3, and a
/// heartbeat more frequent than once a second costs more than it protects.
pub const MIN_LEASE_TTL_MS: u64 = 3_000;
/// The longest marker lifetime: 30 days.
pub const MAX_RESULT_DEDUP_TTL_MS: u64 = 30 * 24 * 3_600_000;
/// The most items one store call takes in one script run; larger batches
/// are split into calls of this size. The runtime's claim, ack and renew
/// batch sizes must not exceed it (Lua's `unpack` takes a few thousand
/// values at most, and every item passes up to four).
pub const MAX_BATCH: usize = 500;

/// Store-wide settings, the same for every queue a store serves.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreConfig {
    /// Crash-detection window: a claim not renewed for this long is reclaimed.
    pub lease_ttl_ms: u64,
    /// Lifetime of terminal markers; must exceed the longest redelivery chain.
    pub result_dedup_ttl_ms: u64,
    /// Lease expiries after which a request is dead-lettered (0 = unlimited).
    pub max_deliveries: u32,
    /// The shared retry sorted set (Go: `retry-sortedset`).
    pub retry_set: String,
    /// Where promoted retries go when their member names no queue.
    pub default_queue: String,
    /// Result list of records the store writes itself (`DELIVERY_LIMIT`) when
    /// neither the queue nor the member names one.
    pub default_result_list: String,
    /// Per-queue result list overrides (queue config `result_queue_name`).
    pub queue_result_lists: BTreeMap<String, String>,
    /// Per-queue result list TTLs in seconds (queue config
    /// `result_ttl_seconds`): the `EXPIRE` an unresolved member's record
    /// sets on its list ([`crate::routing::route`]).
    pub queue_result_ttls: BTreeMap<String, u64>,
    /// The transport's `allowed_result_lists`: when set, a record may go
    /// only to a list it allows, the default list, or its queue's
    /// configured list; any other is refused by name
    /// ([`StoreConfig::result_list_refusal`]). `None`: off (Go parity).
    pub allowed_result_lists: Option<AllowList>,
    /// Per-queue `allowed_result_lists`: replaces the transport's for that
    /// queue (an empty one allows only the configured lists).
    pub queue_allowed_result_lists: BTreeMap<String, AllowList>,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            lease_ttl_ms: 300_000,
            result_dedup_ttl_ms: 21_600_000,
            max_deliveries: 10,
            retry_set: wire::DEFAULT_RETRY_SET.to_owned(),
            default_queue: wire::DEFAULT_QUEUE.to_owned(),
            default_result_list: wire::DEFAULT_RESULT_LIST.to_owned(),
            queue_result_lists: BTreeMap::new(),
            queue_result_ttls: BTreeMap::new(),
            allowed_result_lists: None,
            queue_allowed_result_lists: BTreeMap::new(),
        }
    }
}

impl StoreConfig {
    /// The result list and TTL of a record about a member of `queue`
    /// ([`crate::routing::route`] with this queue's configured list and
    /// TTL): what the runtime decides for its records, so a store's own
    /// records (`DELIVERY_LIMIT`) land beside them. `member` is `None`
    /// when it cannot be parsed.
    pub fn route(&self, queue: &str, member: Option<&ParsedMember>) -> Route {
        let configured = self.queue_result_lists.get(queue).map(String::as_str);
        let ttl = self.queue_result_ttls.get(queue).copied();
        let queue_route = (configured.is_some() || ttl.is_some()).then_some(QueueRoute {
            result_queue_name: configured,
            result_ttl_seconds: ttl,
        });
        route(
            member.map(MemberRoute::of),
            queue_route,
            &self.default_result_list,
        )
    }

    /// The allow-list in force for records about members of `queue`: the
    /// queue's own, else the transport's; `None` when off.
    pub fn allow_list_for(&self, queue: &str) -> Option<&AllowList> {
        self.queue_allowed_result_lists
            .get(queue)
            .or(self.allowed_result_lists.as_ref())
    }

    /// The queues this configuration knows of: `queue` itself, the default
    /// queue and every queue with a configured result list.
    fn known_queues<'a>(&'a self, queue: &'a str) -> Vec<&'a str> {
        let mut queues = vec![queue, self.default_queue.as_str()];
        queues.extend(self.queue_result_lists.keys().map(String::as_str));
        queues
    }

    /// Why `list` cannot take a record about a member of `queue`, judged by
    /// its name alone: it is a known queue, a bookkeeping key, the retry set
    /// or a per-request key (see [`crate::keys::role_of`]), or an
    /// allow-list is in force for `queue` ([`StoreConfig::allow_list_for`])
    /// and the name is neither allowed by it, the default list nor the
    /// queue's configured list. `None` when the name is free; a free name
    /// may still hold another type in the store.
    pub fn result_list_refusal(&self, queue: &str, list: &str) -> Option<String> {
        if list.is_empty() {
            return Some("result list name is empty".to_owned());
        }
        if let Some(role) = role_of(list, &self.known_queues(queue), &self.retry_set) {
            return Some(format!("result list \"{list}\" is {role}"));
        }
        let allow = self.allow_list_for(queue)?;
        let configured = list == self.default_result_list
            || self
                .queue_result_lists
                .get(queue)
                .is_some_and(|l| l == list);
        (!configured && !allow.allows(list)).then(|| {
            format!(
                "result list \"{list}\" is not allowed for queue \"{queue}\" \
                 (allowed_result_lists: {})",
                allow.entries().join(", ")
            )
        })
    }

    /// Why a retry entry must not be moved to `queue`, judged by its name:
    /// it is a bookkeeping key, the retry set or a per-request key.
    pub fn retry_destination_refusal(&self, queue: &str) -> Option<String> {
        if queue.is_empty() {
            return Some("retry entry names an empty queue".to_owned());
        }
        // The queue itself is a fine destination: only other roles refuse it.
        role_of(queue, &[], &self.retry_set)
            .map(|role| format!("retry entry's queue \"{queue}\" is {role}"))
    }

    /// Checks the settings, naming the first bad one and its fix.
    pub fn validate(&self) -> Result<(), String> {
        if self.lease_ttl_ms < MIN_LEASE_TTL_MS {
            return Err(format!(
                "claim lease TTL is {} ms: set claim_lease_ttl_seconds to at least {} \
                 (heartbeats run every lease / 3, at least a second apart)",
                self.lease_ttl_ms,
                MIN_LEASE_TTL_MS / 1000
            ));
        }
        if self.result_dedup_ttl_ms > MAX_RESULT_DEDUP_TTL_MS {
            return Err(format!(
                "result dedup TTL is {} ms: set result_dedup_ttl_seconds to at most {} (30 days)",
                self.result_dedup_ttl_ms,
                MAX_RESULT_DEDUP_TTL_MS / 1000
            ));
        }
        if self.result_dedup_ttl_ms <= self.lease_ttl_ms {
            return Err(format!(
                "result dedup TTL ({} ms) is not longer than the claim lease TTL ({} ms): \
                 raise result_dedup_ttl_seconds above the lease so markers outlive redeliveries",
                self.result_dedup_ttl_ms, self.lease_ttl_ms
            ));
        }
        for (what, name) in [
            ("retry set", &self.retry_set),
            ("default queue", &self.default_queue),
            ("default result list", &self.default_result_list),
        ] {
            if name.is_empty() {
                return Err(format!("the {what} name is empty: give it a key name"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(f: impl FnOnce(&mut StoreConfig)) -> Result<(), String> {
        let mut config = StoreConfig::default();
        f(&mut config);
        config.validate()
    }

    #[test]
    fn the_defaults_are_valid() {
        assert_eq!(StoreConfig::default().validate(), Ok(()));
    }

    #[test]
    fn a_lease_under_three_seconds_is_refused_naming_the_setting() {
        let err = with(|c| c.lease_ttl_ms = 2_999).unwrap_err();
        assert!(
            err.contains("claim_lease_ttl_seconds") && err.contains("at least 3"),
            "{err}"
        );
        assert_eq!(with(|c| c.lease_ttl_ms = 3_000), Ok(()));
    }

    #[test]
    fn a_dedup_ttl_over_thirty_days_or_not_above_the_lease_is_refused() {
        let err = with(|c| c.result_dedup_ttl_ms = MAX_RESULT_DEDUP_TTL_MS + 1).unwrap_err();
        assert!(
            err.contains("result_dedup_ttl_seconds") && err.contains("30 days"),
            "{err}"
        );
        assert_eq!(
            with(|c| c.result_dedup_ttl_ms = MAX_RESULT_DEDUP_TTL_MS),
            Ok(())
        );
        let err = with(|c| c.result_dedup_ttl_ms = c.lease_ttl_ms).unwrap_err();
        assert!(err.contains("above the lease"), "{err}");
    }

    #[test]
    fn a_result_list_named_like_the_queue_its_bookkeeping_or_the_retry_set_is_refused() {
        let config = StoreConfig::default();
        let refused = |list| config.result_list_refusal("q", list);
        assert_eq!(
            refused("q").as_deref(),
            Some("result list \"q\" is the pending set of queue \"q\"")
        );
        assert!(refused("q:dead").unwrap().contains("dead key"));
        assert!(refused("other:claimed").unwrap().contains("claimed key"));
        assert!(
            refused(wire::DEFAULT_RETRY_SET)
                .unwrap()
                .contains("retry set")
        );
        assert!(
            refused(wire::DEFAULT_QUEUE)
                .unwrap()
                .contains("pending set")
        );
        assert!(
            refused("result-terminal:x")
                .unwrap()
                .contains("per-request")
        );
        assert_eq!(refused("results"), None);
    }

    #[test]
    fn a_retry_destination_may_be_any_queue_but_not_a_bookkeeping_key_or_the_retry_set() {
        let config = StoreConfig::default();
        assert_eq!(config.retry_destination_refusal("q"), None);
        assert!(
            config
                .retry_destination_refusal("q:claims-idx")
                .unwrap()
                .contains("claims-idx key")
        );
        assert!(
            config
                .retry_destination_refusal(wire::DEFAULT_RETRY_SET)
                .unwrap()
                .contains("retry set")
        );
    }
}
