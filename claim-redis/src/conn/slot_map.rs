//! Which cluster node serves each slot, as `CLUSTER SLOTS` last said: the grouping of the per-node reads and deletes of per-request keys (`ops/cluster/node_keys.rs`), refreshed when a node refuses a key.
//!
//! The map only groups keys; it decides nothing. A key grouped under the
//! wrong node (the map is stale: a failover, a resharding) is refused by
//! the node the call reaches and goes the per-slot way, so a stale map
//! costs a call, never a read or a delete. A refusal marks the map stale;
//! the next user fetches it again (one `CLUSTER SLOTS`, at most once per
//! [`REFRESH_EVERY`], by one caller at a time; the others keep using the
//! old map meanwhile). A standalone server (the hash-tagged layout on one
//! server, Sentinel) is one node serving every slot.

use super::{Backend, Conn, Effect};
use crate::slots::SLOTS;
use claim_core::Op;
use redis::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

/// The least time between two fetches of the map.
pub(crate) const REFRESH_EVERY: Duration = Duration::from_millis(500);

/// A node index per slot.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SlotMap {
    owner: Vec<Option<u16>>,
}

impl SlotMap {
    /// One server serving every slot.
    pub(crate) fn one_node() -> SlotMap {
        SlotMap {
            owner: vec![Some(0); usize::from(SLOTS)],
        }
    }

    /// The node (an index, stable within this map) serving `slot`, `None`
    /// when no node does.
    pub(crate) fn node_of(&self, slot: u16) -> Option<u16> {
        self.owner.get(usize::from(slot)).copied().flatten()
    }

    /// A `CLUSTER SLOTS` reply: `[start, end, [host, port, …], replicas…]`
    /// per range; nodes told apart by host and port. `None` when it does
    /// not read as one.
    pub(crate) fn parse(reply: &Value) -> Option<SlotMap> {
        let Value::Array(ranges) = reply else {
            return None;
        };
        let mut owner = vec![None; usize::from(SLOTS)];
        let mut nodes: Vec<(Vec<u8>, i64)> = Vec::new();
        for range in ranges {
            let Value::Array(parts) = range else {
                return None;
            };
            let (Some(Value::Int(start)), Some(Value::Int(end)), Some(Value::Array(primary))) =
                (parts.first(), parts.get(1), parts.get(2))
            else {
                return None;
            };
            let (Some(Value::BulkString(host)), Some(Value::Int(port))) =
                (primary.first(), primary.get(1))
            else {
                return None;
            };
            let node = (host.clone(), *port);
            let index = match nodes.iter().position(|n| *n == node) {
                Some(i) => i,
                None => {
                    nodes.push(node);
                    nodes.len() - 1
                }
            };
            let index = u16::try_from(index).ok()?;
            let (start, end) = (usize::try_from(*start).ok()?, usize::try_from(*end).ok()?);
            owner.get_mut(start..=end)?.fill(Some(index));
        }
        Some(SlotMap { owner })
    }

    /// One slot each node serves (its first), one per node.
    pub(crate) fn first_slots(&self) -> Vec<u16> {
        let mut first: Vec<Option<u16>> = Vec::new();
        for (slot, node) in self.owner.iter().enumerate() {
            if let Some(node) = node.map(usize::from) {
                first.resize(first.len().max(node + 1), None);
                first[node].get_or_insert(slot as u16);
            }
        }
        first.into_iter().flatten().collect()
    }
}

/// The cluster's map, as last fetched.
#[derive(Default)]
pub(crate) struct SlotMapCache {
    map: RwLock<Option<Arc<SlotMap>>>,
    stale: AtomicBool,
    last_fetch: Mutex<Option<Instant>>,
}

impl SlotMapCache {
    /// Whether this caller should fetch now: no map or a stale one, and no
    /// fetch in the last [`REFRESH_EVERY`] (claimed by this caller).
    fn due(&self, have: bool) -> bool {
        if have && !self.stale.load(Ordering::Relaxed) {
            return false;
        }
        let mut last = self.last_fetch.lock().expect("slot map lock");
        if last.is_some_and(|t| t.elapsed() < REFRESH_EVERY) {
            return false;
        }
        *last = Some(Instant::now());
        true
    }
}

impl Conn {
    /// The map to group per-request keys by: one node for a standalone
    /// server; a cluster's as fetched (again when stale), `None` when it
    /// could not be fetched (the caller goes the per-slot way).
    pub(crate) async fn slot_map(&self, op: Op) -> Option<Arc<SlotMap>> {
        static ONE_NODE: OnceLock<Arc<SlotMap>> = OnceLock::new();
        let Backend::Cluster(cluster) = &self.backend else {
            return Some(
                ONE_NODE
                    .get_or_init(|| Arc::new(SlotMap::one_node()))
                    .clone(),
            );
        };
        let cache = &cluster.slot_map;
        let have = cache.map.read().expect("slot map lock").clone();
        if !cache.due(have.is_some()) {
            return have;
        }
        let cmd = redis::cmd("CLUSTER").arg("SLOTS").clone();
        match self.query::<Value>(op, Effect::Read, &cmd).await {
            Ok(reply) => match SlotMap::parse(&reply) {
                Some(map) => {
                    let map = Arc::new(map);
                    *cache.map.write().expect("slot map lock") = Some(map.clone());
                    cache.stale.store(false, Ordering::Relaxed);
                    return Some(map);
                }
                None => tracing::warn!("CLUSTER SLOTS answered something else than a slot map"),
            },
            Err(e) => tracing::debug!(error = %e, "CLUSTER SLOTS failed; the old slot map stays"),
        }
        have
    }

    /// Tests: groups keys by `map` until a refusal marks it stale (a stale
    /// map, as a failover or resharding leaves one).
    #[cfg(test)]
    pub(crate) fn use_slot_map(&self, map: SlotMap) {
        if let Backend::Cluster(cluster) = &self.backend {
            *cluster.slot_map.map.write().expect("slot map lock") = Some(Arc::new(map));
            *cluster.slot_map.last_fetch.lock().expect("slot map lock") = Some(Instant::now());
        }
    }

    /// A node refused a key the map placed on it: fetch the map again.
    pub(crate) fn slot_map_is_stale(&self) {
        if let Backend::Cluster(cluster) = &self.backend {
            cluster.slot_map.stale.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(host: &str, port: i64) -> Value {
        Value::Array(vec![Value::BulkString(host.into()), Value::Int(port)])
    }

    fn range(start: i64, end: i64, primary: Value) -> Value {
        Value::Array(vec![Value::Int(start), Value::Int(end), primary])
    }

    #[test]
    fn a_cluster_slots_reply_maps_each_slot_to_the_primary_serving_it() {
        let reply = Value::Array(vec![
            range(0, 5460, node("127.0.0.1", 7000)),
            range(5461, 10922, node("127.0.0.1", 7001)),
            range(10923, 16000, node("127.0.0.1", 7000)),
        ]);
        let map = SlotMap::parse(&reply).expect("a map");
        assert_eq!(map.owner[0], Some(0));
        assert_eq!(map.owner[5461], Some(1));
        assert_eq!(map.owner[12000], Some(0), "one node, one index");
        assert_eq!(map.owner[16383], None, "a slot no range names has no node");
    }

    #[test]
    fn a_reply_that_is_no_slot_map_or_names_slots_past_the_last_reads_as_none() {
        assert_eq!(SlotMap::parse(&Value::Okay), None);
        let past = Value::Array(vec![range(0, 16384, node("h", 1))]);
        assert_eq!(SlotMap::parse(&past), None);
    }
}
