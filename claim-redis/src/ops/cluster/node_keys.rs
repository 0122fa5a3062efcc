//! Hash-tagged layout: per-request keys read and compare-and-deleted with one script call per cluster node (`lua/node_get.lua`, `lua/node_del_if.lua`, cross-slot by Redis 7's `allow-cross-slot-keys`), the keys a node refuses left to the per-slot path of `request_keys`.
//!
//! Why. Per-request keys (`request-active:<id>`, `request-cancel:<id>`,
//! `request-payload:`, terminal markers) hash by request id, so a batch's
//! keys lie in as many slots as it has requests; per slot they cost one
//! `MGET` each to read and one `del_if.lua` call each to delete. A node
//! serves thousands of slots, and a script flagged
//! `allow-cross-slot-keys` may touch keys of any slot its node serves, one
//! slot per command: so one call per node reads or deletes them all.
//!
//! The exception, and why it is safe (docs/ARCHITECTURE.md, key rules;
//! docs/RELIABILITY.md). These two scripts declare only a routing key
//! (`KEYS[1]`, one of their keys, which the cluster routes the call by)
//! and take the others in ARGV. They touch only per-request keys of this
//! store: [`per_request`] sends nothing else, and the scripts check every
//! key's prefix and shape again and refuse the whole call (touching
//! nothing) otherwise; producer keys are only ever deleted by comparing
//! the generation's token. Keys are grouped by the node
//! [`crate::conn::SlotMap`] says serves their slot. A key the node does
//! not serve (the map is stale: a failover, a resharding, a slot
//! migrating) fails its own command alone inside the script and comes
//! back as refused, and goes the per-slot way, which follows MOVED and
//! ASK; the map is fetched again: nothing is lost, only a call spent. A
//! call that fails as a whole and transiently (its node down or hung,
//! NOREPLICAS, `CLIENT PAUSE`) fails a read, as the per-slot read of the
//! same node would (the caller retries, as before); its deletes go
//! straight to the per-key resends of the next 15 s. Any other failure
//! of a whole call sends its keys the per-slot way. A
//! compare-and-delete is idempotent, so a key deleted by both paths (a
//! per-node call that timed out after running) is deleted once. Reads
//! keep their old contract: not atomic with the caller's script, as the
//! per-slot reads were not (each caller's header says why).
//!
//! Explicit-time mode (tests) keeps its deletes per slot: each deletes a
//! side-hash entry in the key's slot as well (`del_if.lua`).

use crate::conn::SlotMap;
use crate::keys::MARKER_PREFIX;
use crate::ops::call::{self, evalsha};
use crate::state::RedisStore;
use claim_core::wire::{ACTIVE_KEY_PREFIX, CANCEL_KEY_PREFIX, PAYLOAD_KEY_PREFIX};
use claim_core::{Op, StoreError};
use redis::Value;
use std::collections::BTreeMap;

/// In node_get.lua's reply: the key holds another type (its name follows).
const OTHER_TYPE: i64 = 1;
/// In both scripts' replies: the node does not serve the key.
const REFUSED: i64 = 2;

/// Whether `key` is `<prefix><shape><at least one byte>` for one of `shapes`.
fn has_shape(prefix: &str, key: &str, shapes: &[&str]) -> bool {
    key.strip_prefix(prefix).is_some_and(|rest| {
        shapes
            .iter()
            .any(|s| rest.len() > s.len() && rest.starts_with(s))
    })
}

/// The keys the per-node reads may touch: this store's per-request keys.
fn per_request(store: &RedisStore, key: &str) -> bool {
    let shapes = [
        ACTIVE_KEY_PREFIX,
        CANCEL_KEY_PREFIX,
        PAYLOAD_KEY_PREFIX,
        MARKER_PREFIX,
    ];
    has_shape(store.keys().prefix(), key, &shapes)
}

/// The keys the per-node deletes may touch with `expected`: producer keys
/// only with a token to compare, payload keys with or without.
fn deletable(store: &RedisStore, key: &str, expected: &str) -> bool {
    let prefix = store.keys().prefix();
    has_shape(prefix, key, &[PAYLOAD_KEY_PREFIX])
        || (!expected.is_empty() && has_shape(prefix, key, &[ACTIVE_KEY_PREFIX, CANCEL_KEY_PREFIX]))
}

/// Indices of `keys` that `fits`, grouped by node, each node's by slot;
/// the others in the second list.
fn by_node(
    map: &SlotMap,
    keys: &[&str],
    fits: impl Fn(usize) -> bool,
) -> (Vec<Vec<Vec<usize>>>, Vec<usize>) {
    let mut nodes: BTreeMap<u16, BTreeMap<u16, Vec<usize>>> = BTreeMap::new();
    let mut left = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let slot = crate::slots::hash_slot(key.as_bytes());
        match map.node_of(slot).filter(|_| fits(i)) {
            Some(node) => {
                nodes
                    .entry(node)
                    .or_default()
                    .entry(slot)
                    .or_default()
                    .push(i);
            }
            None => left.push(i),
        }
    }
    let groups = nodes
        .into_values()
        .map(|slots| slots.into_values().collect())
        .collect();
    (groups, left)
}

/// What [`read`] found: values and types as `request_keys::strings`
/// answers them, and the indices of the keys it could not read, for the
/// per-slot path.
pub(crate) struct Read {
    pub values: Vec<Option<Vec<u8>>>,
    pub types: Vec<Option<String>>,
    pub left: Vec<usize>,
}

/// The string values of `keys` (and with `kinds`, the type of each that
/// holds another), one node_get.lua call per node, the calls concurrent.
/// A call that fails transiently (its node down or hung: the per-slot
/// reads would wait for the same node) fails the read.
pub(crate) async fn read(
    store: &RedisStore,
    op: Op,
    keys: &[String],
    kinds: bool,
) -> Result<Read, StoreError> {
    let n = keys.len();
    let mut out = Read {
        values: vec![None; n],
        types: vec![None; n],
        left: Vec::new(),
    };
    let Some(map) = store.conn().slot_map(op).await else {
        out.left = (0..n).collect();
        return Ok(out);
    };
    let names: Vec<&str> = keys.iter().map(String::as_str).collect();
    let (nodes, left) = by_node(&map, &names, |i| per_request(store, &keys[i]));
    out.left = left;
    let script = &store.scripts().node_get;
    let calls = nodes.iter().map(|slots| async move {
        let count: usize = slots.iter().map(Vec::len).sum();
        let bytes: usize = slots.iter().flatten().map(|&i| keys[i].len() + 8).sum();
        let mut cmd = evalsha(script, 1, 2 + slots.len() + count, bytes + 64);
        cmd.arg(&keys[slots[0][0]])
            .arg(store.keys().prefix())
            .arg(if kinds { "1" } else { "0" });
        for group in slots {
            cmd.arg(group.len());
            for &i in group {
                cmd.arg(&keys[i]);
            }
        }
        let reply: Result<Vec<Value>, StoreError> = call::run(store, op, script, &cmd).await;
        (slots, reply)
    });
    let mut refused = false;
    for (slots, reply) in futures::future::join_all(calls).await {
        let order: Vec<usize> = slots.iter().flatten().copied().collect();
        let pairs = match reply {
            Ok(reply) if reply.len() == 2 * order.len() => reply,
            Err(e) if e.is_transient() => return Err(e),
            other => {
                tracing::debug!(?op, reply = ?other.err(), "a per-node read failed; its keys are read per slot");
                refused = true;
                out.left.extend(order);
                continue;
            }
        };
        for (&i, pair) in order.iter().zip(pairs.chunks(2)) {
            let code: i64 = redis::from_redis_value(pair[0].clone()).unwrap_or(REFUSED);
            let value: Option<Vec<u8>> = redis::from_redis_value(pair[1].clone()).unwrap_or(None);
            match code {
                0 => out.values[i] = value,
                OTHER_TYPE => {
                    out.types[i] = value.map(|v| String::from_utf8_lossy(&v).into_owned())
                }
                _ => {
                    refused = true;
                    out.left.push(i);
                }
            }
        }
    }
    if refused {
        store.conn().slot_map_is_stale();
    }
    Ok(out)
}

/// What [`delete`] left: targets refused (or not sent), for the per-slot
/// path now; targets of calls that failed transiently (a node down or
/// hung), to be sent again per key in the background.
pub(crate) struct Left {
    pub refused: Vec<(String, String)>,
    pub failed: Vec<(String, String)>,
}

/// Deletes each `(key, expected)` as `request_keys::delete` does, one
/// node_del_if.lua call per node, the calls concurrent; answers what is
/// left ([`Left`]; refused includes what was not sent: explicit time, no
/// slot map, a key of another shape).
pub(crate) async fn delete(store: &RedisStore, op: Op, targets: Vec<(String, String)>) -> Left {
    let all = |refused| Left {
        refused,
        failed: Vec::new(),
    };
    if store.explicit_now().is_some() || targets.is_empty() {
        return all(targets);
    }
    let Some(map) = store.conn().slot_map(op).await else {
        return all(targets);
    };
    let names: Vec<&str> = targets.iter().map(|(k, _)| k.as_str()).collect();
    let (nodes, mut left) = by_node(&map, &names, |i| {
        deletable(store, &targets[i].0, &targets[i].1)
    });
    let script = &store.scripts().node_del_if;
    let targets_ref = &targets;
    let calls = nodes.iter().map(|slots| async move {
        let order: Vec<usize> = slots.iter().flatten().copied().collect();
        let bytes: usize = order
            .iter()
            .map(|&i| targets_ref[i].0.len() + targets_ref[i].1.len() + 8)
            .sum();
        let mut cmd = evalsha(script, 1, 1 + 2 * order.len(), bytes + 64);
        cmd.arg(&targets_ref[order[0]].0).arg(store.keys().prefix());
        for &i in &order {
            cmd.arg(&targets_ref[i].0).arg(&targets_ref[i].1);
        }
        let reply: Result<Vec<i64>, StoreError> = call::run(store, op, script, &cmd).await;
        (order, reply)
    });
    let (mut refused, mut failed) = (false, Vec::new());
    for (order, reply) in futures::future::join_all(calls).await {
        match reply {
            Ok(codes) if codes.len() == order.len() => {
                for (&i, code) in order.iter().zip(codes) {
                    if code == REFUSED {
                        refused = true;
                        left.push(i);
                    }
                }
            }
            Err(e) if e.is_transient() => {
                tracing::debug!(?op, error = %e, "a per-node delete failed; its keys are sent again per key");
                refused = true;
                failed.extend(order);
            }
            other => {
                tracing::debug!(?op, reply = ?other.err(), "a per-node delete failed; its keys are deleted per slot");
                refused = true;
                left.extend(order);
            }
        }
    }
    if refused {
        store.conn().slot_map_is_stale();
    }
    let mut targets: Vec<Option<(String, String)>> = targets.into_iter().map(Some).collect();
    let mut take = |mut at: Vec<usize>| {
        at.sort_unstable();
        at.into_iter().filter_map(|i| targets[i].take()).collect()
    };
    let refused = take(left);
    Left {
        refused,
        failed: take(failed),
    }
}

#[cfg(test)]
#[path = "node_keys_tests.rs"]
mod tests;
