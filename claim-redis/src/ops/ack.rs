//! `ack` in the plain layout: runs `lua/ack.lua` (its header is the layout), one call per [`MAX_BATCH`](crate::state::MAX_BATCH) items, arguments written in place; the per-item arguments `ack_cluster` (the hash-tagged layout) writes alike.

use super::call::{self, evalsha};
use crate::codec::packed_codes;
use crate::state::RedisStore;
use claim_core::marker::record_digest;
use claim_core::store::AckItem;
use claim_core::{ClaimKey, Op, OwnerToken, StoreError};
use redis::RedisWrite;
use std::borrow::Borrow;

/// Runs ack.lua on at most [`MAX_BATCH`](crate::state::MAX_BATCH) items, with every key an item
/// touches (its marker, producer keys and payload key), and answers its
/// code per item.
pub(crate) async fn one_call(
    store: &RedisStore,
    (queue, owner): (&str, &OwnerToken),
    chunk: &[AckItem],
) -> Result<Vec<i64>, StoreError> {
    let q = store.keys().queue(queue);
    let keys = store.keys();
    let n = chunk.len();
    let runs = ack_runs(chunk);
    let payloads = chunk.iter().filter(|i| i.payload_ref.is_some()).count();
    let script = &store.scripts().ack;
    let mut cmd = evalsha(
        script,
        7 + runs.len() + 3 * n + payloads,
        6 + 3 * runs.len() + 6 * n + payloads,
        ack_bytes(chunk),
    );
    for key in q.all() {
        cmd.arg(key);
    }
    cmd.arg(keys.clock_side());
    ack_list_keys(&mut cmd, store, &runs);
    for item in chunk {
        cmd.write_arg_fmt(keys.marker_key(&item.generation));
    }
    for item in chunk {
        let id = &item.generation.id;
        cmd.write_arg_fmt(keys.active_key(id));
        cmd.write_arg_fmt(keys.cancel_key(id));
    }
    for payload_ref in chunk.iter().filter_map(|i| i.payload_ref.as_deref()) {
        cmd.write_arg_fmt(format_args!("{}{payload_ref}", keys.prefix()));
    }
    ack_args(&mut cmd, store, (queue, owner), &runs, chunk);
    for (i, item) in chunk.iter().enumerate() {
        if item.payload_ref.is_some() {
            cmd.arg(i + 1);
        }
    }
    let reply = call::run(store, Op::Ack, script, &cmd).await?;
    packed_codes(Op::Ack, &reply, n)
}

/// Consecutive items with the same result list and list TTL, as (list,
/// item count, TTL): ack.lua pushes each run with one LPUSH (and one
/// EXPIRE when the TTL is set) and takes each list key once.
pub(crate) fn ack_runs<T: Borrow<AckItem>>(items: &[T]) -> Vec<(&str, usize, u64)> {
    let mut runs: Vec<(&str, usize, u64)> = Vec::new();
    for item in items.iter().map(Borrow::borrow) {
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

/// The bytes an ack.lua call's arguments take, about.
pub(crate) fn ack_bytes<T: Borrow<AckItem>>(chunk: &[T]) -> usize {
    chunk
        .iter()
        .map(Borrow::borrow)
        .map(|i| i.record.len() + i.member.len() + 240)
        .sum()
}

/// ack.lua's KEYS for each run's result list, prefixed.
pub(crate) fn ack_list_keys(cmd: &mut redis::Cmd, store: &RedisStore, runs: &[(&str, usize, u64)]) {
    for (list, _, _) in runs {
        cmd.write_arg_fmt(format_args!("{}{list}", store.keys().prefix()));
    }
}

/// ack.lua's ARGV from the owner through the record digests (both
/// variants; the plain one adds the payload indices after them).
pub(crate) fn ack_args<T: Borrow<AckItem>>(
    cmd: &mut redis::Cmd,
    store: &RedisStore,
    (queue, owner): (&str, &OwnerToken),
    runs: &[(&str, usize, u64)],
    chunk: &[T],
) {
    let items = || chunk.iter().map(Borrow::borrow);
    cmd.arg(owner.as_str())
        .arg(store.time_arg())
        .arg(store.inner.config.result_dedup_ttl_ms)
        .arg(store.ttl_slack())
        .arg(runs.len())
        .arg(store.keys().prefix().len());
    for (list, count, ttl) in runs {
        let refusal = store.list_refusal(queue, list);
        cmd.arg(*count)
            .arg(refusal.as_deref().unwrap_or(""))
            .arg(*ttl);
    }
    for item in items() {
        cmd.write_arg_fmt(ClaimKey(&item.generation));
    }
    for item in items() {
        cmd.arg(&item.generation.token);
    }
    for item in items() {
        cmd.arg(item.record.as_bytes());
    }
    for item in items() {
        cmd.arg(item.member.as_bytes());
    }
    for item in items() {
        // The marker lives from the member's deadline, not its pending
        // score (which a producer may set to anything, ±inf included).
        cmd.arg(item.member.deadline().unwrap_or(0));
    }
    for item in items() {
        cmd.arg(record_digest(item.record.as_bytes()));
    }
}
