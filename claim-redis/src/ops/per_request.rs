//! Hash-tagged layout: per-request keys (markers, `request-cancel:`, `request-active:`, `request-payload:`) read and deleted with per-slot commands, one pipelined round trip.
//!
//! With the hash-tagged layout a script runs in one slot, and per-request
//! keys lie in slots of their own (a marker in its result list's slot).
//! Their values are read here first, grouped by slot (one `MGET` per
//! slot, all pipelined; a cluster client routes each command to its
//! slot's node), and handed to the script as arguments. The reads are not
//! atomic with the script: each caller's header says what a write landing
//! in between can cause.

use super::call::check_keys;
use crate::conn::{Effect, bad_reply};
use crate::slots::hash_slot;
use crate::store::RedisStore;
use claim_core::{Op, StoreError};
use redis::Value;
use std::collections::BTreeMap;

/// Indices of `keys`, grouped by `group` of each key, groups in key order.
fn grouped<K, G: Ord>(keys: &[K], group: impl Fn(&K) -> G) -> Vec<Vec<usize>> {
    let mut groups: BTreeMap<G, Vec<usize>> = BTreeMap::new();
    for (i, key) in keys.iter().enumerate() {
        groups.entry(group(key)).or_default().push(i);
    }
    groups.into_values().collect()
}

fn by_slot(keys: &[String]) -> Vec<Vec<usize>> {
    grouped(keys, |k| hash_slot(k.as_bytes()))
}

/// The string values of `keys` (`None` where missing or not a string),
/// one `MGET` per slot, pipelined.
pub(crate) async fn mget(
    store: &RedisStore,
    op: Op,
    keys: &[String],
) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
    Ok(strings(store, op, keys, false).await?.0)
}

/// [`mget`], and, for each key that holds another type than a string,
/// that type (`Some("hash")`, ...): a second round trip only when some key
/// exists without a string value.
pub(crate) async fn strings(
    store: &RedisStore,
    op: Op,
    keys: &[String],
    kinds: bool,
) -> Result<(Vec<Option<Vec<u8>>>, Vec<Option<String>>), StoreError> {
    let mut values = vec![None; keys.len()];
    let mut types = vec![None; keys.len()];
    if keys.is_empty() {
        return Ok((values, types));
    }
    let groups = by_slot(keys);
    let mut pipe = redis::pipe();
    for group in &groups {
        let names: Vec<&String> = group.iter().map(|&i| &keys[i]).collect();
        check_keys(store, op, "MGET", &names)?;
        pipe.cmd("MGET").arg(&names);
        if kinds {
            pipe.cmd("EXISTS").arg(&names);
        }
    }
    let replies: Vec<Value> = store.conn().query(op, Effect::Read, &pipe).await?;
    let per = if kinds { 2 } else { 1 };
    if replies.len() != per * groups.len() {
        return Err(bad_reply(op, Effect::Read, format!("{replies:?}")));
    }
    let mut unread = Vec::new();
    for (group, reply) in groups.iter().zip(replies.chunks(per)) {
        let got: Vec<Option<Vec<u8>>> = redis::from_redis_value(reply[0].clone())
            .map_err(|e| bad_reply(op, Effect::Read, e))?;
        let read = got.iter().filter(|v| v.is_some()).count();
        for (&i, v) in group.iter().zip(got) {
            values[i] = v;
        }
        if kinds {
            let exists: usize = redis::from_redis_value(reply[1].clone())
                .map_err(|e| bad_reply(op, Effect::Read, e))?;
            if exists > read {
                unread.extend(group.iter().copied().filter(|&i| values[i].is_none()));
            }
        }
    }
    if !unread.is_empty() {
        let mut pipe = redis::pipe();
        for &i in &unread {
            pipe.cmd("TYPE").arg(&keys[i]);
        }
        let kinds: Vec<String> = store.conn().query(op, Effect::Read, &pipe).await?;
        for (&i, kind) in unread.iter().zip(kinds) {
            if kind != "none" && kind != "string" {
                types[i] = Some(kind);
            }
        }
    }
    Ok((values, types))
}

/// Explicit-time mode: the logical expiry of each key, read from the side
/// hash of its slot (one `HMGET` per side hash, pipelined).
pub(crate) async fn side_expiries(
    store: &RedisStore,
    op: Op,
    keys: &[String],
) -> Result<Vec<Option<u64>>, StoreError> {
    let mut out = vec![None; keys.len()];
    if keys.is_empty() {
        return Ok(out);
    }
    let sides: Vec<String> = keys
        .iter()
        .map(|k| store.keys().clock_side_for(k))
        .collect();
    let groups = grouped(&sides, Clone::clone);
    let mut pipe = redis::pipe();
    for group in &groups {
        pipe.cmd("HMGET")
            .arg(&sides[group[0]])
            .arg(group.iter().map(|&i| &keys[i]).collect::<Vec<_>>());
    }
    let replies: Vec<Vec<Option<u64>>> = store.conn().query(op, Effect::Read, &pipe).await?;
    for (group, reply) in groups.iter().zip(replies) {
        for (&i, v) in group.iter().zip(reply) {
            out[i] = v;
        }
    }
    Ok(out)
}

/// Deletes `keys` (one `DEL` per slot) and, in explicit-time mode, their
/// entries in their side hashes; pipelined, not atomic (each delete is
/// idempotent).
pub(crate) async fn del(store: &RedisStore, op: Op, keys: &[String]) -> Result<(), StoreError> {
    if keys.is_empty() {
        return Ok(());
    }
    let mut pipe = redis::pipe();
    for group in by_slot(keys) {
        pipe.cmd("DEL")
            .arg(group.iter().map(|&i| &keys[i]).collect::<Vec<_>>())
            .ignore();
    }
    if store.explicit_now().is_some() {
        let sides: Vec<String> = keys
            .iter()
            .map(|k| store.keys().clock_side_for(k))
            .collect();
        for group in grouped(&sides, Clone::clone) {
            pipe.cmd("HDEL")
                .arg(&sides[group[0]])
                .arg(group.iter().map(|&i| &keys[i]).collect::<Vec<_>>())
                .ignore();
        }
    }
    store
        .conn()
        .query::<()>(op, Effect::Transaction, &pipe)
        .await
}
