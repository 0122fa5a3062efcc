//! `ack`: runs `lua/ack.lua`, one call per [`MAX_BATCH`] items, arguments written in place; the hash-tagged layout goes through `ack_split`.

use super::evalsha;
use crate::codec::{ack_outcome, per_item};
use crate::store::{MAX_BATCH, RedisStore};
use claim_core::ClaimKey;
use claim_core::marker::record_digest;
use claim_core::store::{AckItem, AckOutcome};
use claim_core::{Op, OwnerToken, StoreError, wire};
use redis::RedisWrite;
use std::borrow::Borrow;

/// Delivers the records; the layout is `lua/ack.lua`'s header. In the
/// hash-tagged layout, see `ack_split` (items whose list shares the
/// queue's slot still take this one script).
pub(crate) async fn ack(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[AckItem],
) -> Result<Vec<AckOutcome>, StoreError> {
    if store.keys().tagged() {
        return super::ack_split::ack(store, queue, owner, items).await;
    }
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(MAX_BATCH) {
        let reply = one_script(store, queue, owner, chunk).await?;
        out.extend(reply.into_iter().map(ack_outcome));
    }
    Ok(out)
}

/// Runs ack.lua on at most [`MAX_BATCH`] items and answers its code per
/// item. Plain: every key the item touches. Hash-tagged (the `ack_tagged`
/// variant): only the queue's slot (lists in it, the queue-slot markers),
/// no producer or payload keys: the caller deletes those from bits 1 and 16.
pub(crate) async fn one_script<T: Borrow<AckItem>>(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    chunk: &[T],
) -> Result<Vec<i64>, StoreError> {
    let tagged = store.keys().tagged();
    let q = store.keys().queue(queue);
    let keys = store.keys();
    let config = &store.inner.config;
    let time = store.time_arg();
    let n = chunk.len();
    let runs = runs(chunk);
    let bytes: usize = chunk
        .iter()
        .map(it)
        .map(|i| i.record.len() + i.member.len() + 240)
        .sum();
    let (script, per_item_keys, payloads) = if tagged {
        (&store.scripts().ack_tagged, 1, 0)
    } else {
        let payloads = chunk
            .iter()
            .filter(|i| it(*i).payload_ref.is_some())
            .count();
        (&store.scripts().ack, 3, payloads)
    };
    let mut cmd = evalsha(
        script,
        7 + runs.len() + per_item_keys * n + payloads,
        6 + 3 * runs.len() + 6 * n + payloads,
        bytes,
    );
    for key in q.all() {
        cmd.arg(key);
    }
    if tagged {
        cmd.arg(keys.clock_side_for(&q.pending));
    } else {
        cmd.arg(keys.clock_side());
    }
    for (list, _, _) in &runs {
        cmd.write_arg_fmt(format_args!("{}{list}", keys.prefix()));
    }
    if tagged {
        // The queue-slot marker (every list here shares that slot, so it
        // is the list's marker too): the one ack_split reads and writes.
        for item in chunk.iter().map(it) {
            cmd.write_arg_fmt(keys.marker_key_for(&q.pending, &item.generation));
        }
    } else {
        for item in chunk.iter().map(it) {
            cmd.write_arg_fmt(keys.marker_key(&item.generation));
        }
        for item in chunk.iter().map(it) {
            let id = &item.generation.id;
            cmd.write_arg_fmt(keys.active_key(id));
            cmd.write_arg_fmt(keys.cancel_key(id));
        }
        for payload_ref in chunk.iter().filter_map(|i| it(i).payload_ref.as_deref()) {
            cmd.write_arg_fmt(format_args!("{}{payload_ref}", keys.prefix()));
        }
    }
    cmd.arg(owner.as_str())
        .arg(&time)
        .arg(config.result_dedup_ttl_ms)
        .arg(store.ttl_slack())
        .arg(runs.len())
        .arg(keys.prefix().len());
    for (list, count, ttl) in &runs {
        let refusal = store.list_refusal(queue, list);
        cmd.arg(*count)
            .arg(refusal.as_deref().unwrap_or(""))
            .arg(*ttl);
    }
    for item in chunk.iter().map(it) {
        cmd.write_arg_fmt(ClaimKey(&item.generation));
    }
    for item in chunk.iter().map(it) {
        cmd.arg(&item.generation.token);
    }
    for item in chunk.iter().map(it) {
        cmd.arg(item.record.as_bytes());
    }
    for item in chunk.iter().map(it) {
        cmd.arg(item.member.as_bytes());
    }
    for item in chunk.iter().map(it) {
        // The marker lives from the member's deadline, not its pending
        // score (which a producer may set to anything, ±inf included).
        cmd.arg(wire::member_deadline(item.member.as_bytes()).unwrap_or(0));
    }
    for item in chunk.iter().map(it) {
        cmd.arg(record_digest(item.record.as_bytes()));
    }
    if !tagged {
        for (i, item) in chunk.iter().map(it).enumerate() {
            if item.payload_ref.is_some() {
                cmd.arg(i + 1);
            }
        }
    }
    let reply: Vec<i64> = super::call::run(store, Op::Ack, script, &cmd).await?;
    per_item(Op::Ack, reply, n)
}

/// The item behind a reference or a value.
fn it<T: Borrow<AckItem>>(t: &T) -> &AckItem {
    t.borrow()
}

/// Consecutive items with the same result list and list TTL, as (list,
/// item count, TTL): ack.lua pushes each run with one LPUSH (and one
/// EXPIRE when the TTL is set) and takes each list key once.
fn runs<T: Borrow<AckItem>>(items: &[T]) -> Vec<(&str, usize, u64)> {
    let mut runs: Vec<(&str, usize, u64)> = Vec::new();
    for item in items.iter().map(it) {
        let item_ttl = claim_core::routing::clamp_ttl(item.result_ttl_seconds);
        match runs.last_mut() {
            Some((list, count, ttl)) if *list == item.result_list && *ttl == item_ttl => {
                *count += 1
            }
            _ => runs.push((&item.result_list, 1, item_ttl)),
        }
    }
    runs
}
