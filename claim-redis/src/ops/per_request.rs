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
use claim_core::marker::parse_marker;
use claim_core::wire::ParsedMember;
use claim_core::{Generation, Op, StoreError};
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

/// Hash-tagged layout: the keys a generation's marker may be at. The ack
/// keeps a copy of each marker in the queue's slot (`marker_for` with the
/// pending key; ops/ack_split.rs), read first; the marker itself lies in
/// the slot of the list its record went to, and the list is the acker's
/// choice: the list Go's routing picks for the member
/// (`StoreConfig::route`), the default list, or any queue's
/// configured list; each is looked at (the copy is missing only inside
/// the ack's crash window, or for a record the reclaimer pushed).
pub(crate) fn marker_candidates(
    store: &RedisStore,
    queue: &str,
    parsed: Option<&ParsedMember>,
    generation: &Generation,
) -> Vec<String> {
    let keys = store.keys();
    let config = &store.inner.config;
    let mut lists = vec![config.route(queue, parsed).list];
    lists.push(config.default_result_list.clone());
    lists.extend(config.queue_result_lists.values().cloned());
    let mut out: Vec<String> = Vec::with_capacity(lists.len() + 1);
    out.push(keys.marker_for(&keys.queue(queue).pending, generation));
    for list in lists {
        let marker = keys.marker_for(&keys.list(&list), generation);
        if !out.contains(&marker) {
            out.push(marker);
        }
    }
    out
}

/// Of the marker values read for one generation, the one to decide by: a
/// live one if any (explicit time: its expiry is after now; server time:
/// Redis keeps only live ones), else any present one.
pub(crate) fn best_marker(store: &RedisStore, values: &[Option<Vec<u8>>]) -> Option<String> {
    let now = store.explicit_now();
    let live = |v: &str| match now {
        None => true,
        Some(now) => parse_marker(v).is_none_or(|(expiry, _)| expiry > now.0),
    };
    let texts: Vec<String> = values
        .iter()
        .flatten()
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    texts.iter().find(|v| live(v)).or(texts.first()).cloned()
}

/// The marker value to decide by ([`best_marker`]) of each generation,
/// from its candidate keys ([`marker_candidates`]), read per slot.
pub(crate) async fn markers(
    store: &RedisStore,
    op: Op,
    candidates: &[Vec<String>],
) -> Result<Vec<Option<String>>, StoreError> {
    let flat: Vec<String> = candidates.iter().flatten().cloned().collect();
    let values = mget(store, op, &flat).await?;
    let mut at = 0;
    Ok(candidates
        .iter()
        .map(|c| {
            let best = best_marker(store, &values[at..at + c.len()]);
            at += c.len();
            best
        })
        .collect())
}
