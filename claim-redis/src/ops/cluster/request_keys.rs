//! Hash-tagged layout: per-request keys (markers, `request-cancel:`, `request-active:`, `request-payload:`), which lie in slots of their own, read and deleted after an ack, reclaim or claim with one script call per cluster node (`node_keys`), and what a node refuses per slot: one `MGET` per slot, one compare-and-delete (`del_if.lua`) per key.
//!
//! Reads. A script runs in one slot, and per-request keys lie in slots of
//! their own (a marker in its result list's slot). Their values are read
//! here first, one `node_get.lua` call per node ([`node_keys`]); the keys
//! it could not read go per slot (one `MGET` per slot, all pipelined; a
//! cluster client routes each command to its slot's node), and handed to
//! the script as arguments. The reads are not atomic with the script:
//! each caller's header says what a write landing in between can cause.
//!
//! Deletes. The hash-tagged ack, reclaim and claim delete producer keys
//! (`request-active:`, `request-cancel:`, compared with the generation's
//! token) and payload keys (unconditionally) after their own scripts, once
//! the generation is answered (ack.lua deletes these inline in the plain
//! layout): one `node_del_if.lua` call per node, then per key
//! (`del_if.lua`) what a node refused. Each delete is best effort: the
//! record and its marker are
//! written already, and every key expires on its own (`ack_cluster`'s
//! header says why a leftover is safe). But a failover's window refuses
//! them all, and the chaos run with a primary SIGKILLed found keys left
//! that way; so deletes that fail transiently are sent again for about
//! 15 s. `del_if.lua` compares the token, so a later attempt never deletes
//! a newer generation's producer key, and it is safe to run twice, so
//! every resend is too.

use super::node_keys;
use crate::codec::explicit_time_arg;
use crate::conn::{Effect, bad_reply};
use crate::ops::call::{self, check_keys, evalsha};
use crate::slots::hash_slot;
use crate::state::RedisStore;
use claim_core::store::AckItem;
use claim_core::wire::ParsedMember;
use claim_core::{Generation, Op, StoreError};
use redis::{Cmd, Value};
use std::collections::BTreeMap;

/// Pauses before each later attempt at deletes that failed transiently
/// (a failover's 2–3 s window, a node restarting): about 15 s in all.
const RETRY_PAUSES_MS: [u64; 5] = [500, 1000, 2000, 4000, 8000];

/// In [`after_ack`]'s `bits` and ack.lua's and ack_drop.lua's codes: the
/// producer keys of pushed items.
pub(crate) const PRODUCER_KEYS: i64 = 1;
/// In [`after_ack`]'s `bits` and ack.lua's and ack_drop.lua's codes: the
/// payload key goes.
pub(crate) const PAYLOAD_KEYS: i64 = 16;

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
/// that type (`Some("hash")`, ...): per node ([`node_keys::read`]), then
/// per slot what the nodes refused ([`per_slot`]).
pub(crate) async fn strings(
    store: &RedisStore,
    op: Op,
    keys: &[String],
    kinds: bool,
) -> Result<(Vec<Option<Vec<u8>>>, Vec<Option<String>>), StoreError> {
    let read = node_keys::read(store, op, keys, kinds).await?;
    let (mut values, mut types) = (read.values, read.types);
    if read.left.is_empty() {
        return Ok((values, types));
    }
    let names: Vec<String> = read.left.iter().map(|&i| keys[i].clone()).collect();
    let (v, t) = per_slot(store, op, &names, kinds).await?;
    for ((&i, v), t) in read.left.iter().zip(v).zip(t) {
        values[i] = v;
        types[i] = t;
    }
    Ok((values, types))
}

/// [`strings`] one `MGET` per slot, pipelined (with `kinds`, an `EXISTS`
/// beside each, and a second round trip only when some key exists without
/// a string value).
async fn per_slot(
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
/// pending key; `ack_cluster`), read first; the marker itself lies in
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
    let texts: Vec<String> = values
        .iter()
        .flatten()
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    texts
        .iter()
        .find(|v| store.is_live_marker(v))
        .or(texts.first())
        .cloned()
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

/// Deletes what ack.lua would have deleted inline, from its code per item,
/// for the `bits` asked: bit 1 (pushed) the producer keys still holding
/// this generation's token, bit 16 the payload key.
pub(crate) async fn after_ack(store: &RedisStore, items: &[&AckItem], codes: &[i64], bits: i64) {
    let keys = store.keys();
    let mut targets = Vec::new();
    for (item, &code) in items.iter().zip(codes) {
        let code = code & bits;
        let g = &item.generation;
        if code & PRODUCER_KEYS != 0 {
            targets.push((keys.active(&g.id), g.token.clone()));
            targets.push((keys.cancel(&g.id), g.token.clone()));
        }
        if code & PAYLOAD_KEYS != 0
            && let Some(payload_ref) = &item.payload_ref
        {
            targets.push((keys.payload(payload_ref), String::new()));
        }
    }
    delete(store, Op::Ack, targets).await;
}

/// Deletes each `(key, expected)`: a key holding `expected` (a token), or
/// any value when `expected` is empty; per node ([`node_keys::delete`]),
/// then per key what the nodes refused. Never fails: what cannot be
/// deleted is logged and expires on its own.
pub(crate) async fn delete(store: &RedisStore, op: Op, targets: Vec<(String, String)>) {
    let left = node_keys::delete(store, op, targets).await;
    let later = del_if_calls(store, op, left.failed);
    if !later.is_empty() {
        tokio::spawn(retry_later(store.clone(), op, later));
    }
    per_key(store, op, left.refused).await;
}

/// One `del_if.lua` call per target (a target whose side hash would lie
/// in another slot, impossible by construction, is logged and left).
fn del_if_calls(store: &RedisStore, op: Op, targets: Vec<(String, String)>) -> Vec<Cmd> {
    let keys = store.keys();
    let explicit = explicit_time_arg(store.explicit_now().is_some());
    let script = &store.scripts().del_if;
    let mut calls: Vec<Cmd> = Vec::new();
    for (key, expected) in targets {
        let side = keys.clock_side_for(&key);
        // Key and side hash share a slot by construction; checked all the
        // same, as every call is (the pipeline bypasses `call::run`).
        if let Err(e) = check_keys(store, op, "del_if", &[&key, &side]) {
            tracing::warn!(error = %e, ?op, "a producer or payload key was not deleted; it expires on its own");
            continue;
        }
        let mut cmd = evalsha(script, 2, 2, key.len() + side.len() + expected.len() + 8);
        cmd.arg(&key).arg(&side).arg(&expected).arg(explicit);
        calls.push(cmd);
    }
    calls
}

/// [`delete`] one `del_if.lua` call per key, pipelined; those that fail
/// transiently resent in the background ([`retry_later`]).
async fn per_key(store: &RedisStore, op: Op, targets: Vec<(String, String)>) {
    let script = &store.scripts().del_if;
    let calls = del_if_calls(store, op, targets);
    if calls.is_empty() {
        return;
    }
    let mut pipe = redis::pipe();
    for cmd in &calls {
        pipe.add_command(cmd.clone());
    }
    let all: Result<Vec<i64>, _> = store.conn().query(op, Effect::Transaction, &pipe).await;
    if all.is_ok() {
        return;
    }
    let mut failed = Vec::new();
    for cmd in calls {
        match call::run::<i64>(store, op, script, &cmd).await {
            Err(e) if e.is_transient() => failed.push(cmd),
            Err(e) => {
                tracing::warn!(error = %e, ?op, "a producer or payload key was not deleted; it expires on its own");
            }
            Ok(_) => {}
        }
    }
    if !failed.is_empty() {
        tokio::spawn(retry_later(store.clone(), op, failed));
    }
}

/// Sends the calls that failed transiently again, in the background (the
/// caller has answered already), until each lands or the pauses run out;
/// what is still left then is logged and expires on its own.
async fn retry_later(store: RedisStore, op: Op, mut calls: Vec<Cmd>) {
    let script = &store.scripts().del_if;
    for pause in RETRY_PAUSES_MS {
        tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
        let mut still = Vec::new();
        for cmd in calls {
            if call::run::<i64>(&store, op, script, &cmd).await.is_err() {
                still.push(cmd);
            }
        }
        calls = still;
        if calls.is_empty() {
            return;
        }
    }
    tracing::warn!(
        keys = calls.len(),
        ?op,
        "producer or payload keys were not deleted after retrying for 15 s; they expire on their own"
    );
}
