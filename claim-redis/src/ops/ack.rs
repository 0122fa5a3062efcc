//! `ack`: runs `lua/ack.lua`, one call per [`MAX_BATCH`] items, arguments written in place.

use super::evalsha;
use crate::codec::{ack_outcome, per_item};
use crate::store::{MAX_BATCH, RedisStore};
use claim_core::ClaimKey;
use claim_core::marker::record_digest;
use claim_core::store::{AckItem, AckOutcome};
use claim_core::{Op, OwnerToken, StoreError};
use redis::RedisWrite;

/// Delivers the records; the layout is `lua/ack.lua`'s header.
pub(crate) async fn ack(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[AckItem],
) -> Result<Vec<AckOutcome>, StoreError> {
    let q = store.keys().queue(queue);
    let keys = store.keys();
    let config = &store.inner.config;
    let time = store.time_arg();
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(MAX_BATCH) {
        let n = chunk.len();
        let runs = runs(chunk);
        let bytes: usize = chunk
            .iter()
            .map(|i| i.record.len() + i.member.len() + 240)
            .sum();
        let script = &store.scripts().ack;
        let payloads = chunk.iter().filter(|i| i.payload_ref.is_some()).count();
        let mut cmd = evalsha(
            script,
            7 + runs.len() + 3 * n + payloads,
            6 + 3 * runs.len() + 6 * n + payloads,
            bytes,
        );
        for key in q.all() {
            cmd.arg(key);
        }
        cmd.arg(keys.clock_side());
        for (list, _, _) in &runs {
            cmd.write_arg_fmt(format_args!("{}{list}", keys.prefix()));
        }
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
        cmd.arg(owner.as_str())
            .arg(&time)
            .arg(config.result_dedup_ttl_ms)
            .arg(store.ttl_slack())
            .arg(runs.len())
            .arg(keys.prefix().len());
        for (list, count, ttl) in &runs {
            let refusal = config.result_list_refusal(queue, list);
            cmd.arg(*count)
                .arg(refusal.as_deref().unwrap_or(""))
                .arg(*ttl);
        }
        for item in chunk {
            cmd.write_arg_fmt(ClaimKey(&item.generation));
        }
        for item in chunk {
            cmd.arg(&item.generation.token);
        }
        for item in chunk {
            cmd.arg(item.record.as_bytes());
        }
        for item in chunk {
            cmd.arg(item.member.as_bytes());
        }
        for item in chunk {
            // A score Redis cannot print back as a number (±inf) has no
            // deadline to keep the marker for: the dedup TTL alone does.
            let score = item.score.0;
            cmd.write_arg_fmt(if score.is_finite() { score } else { 0.0 });
        }
        for item in chunk {
            cmd.arg(record_digest(item.record.as_bytes()));
        }
        for (i, item) in chunk.iter().enumerate() {
            if item.payload_ref.is_some() {
                cmd.arg(i + 1);
            }
        }
        let reply: Vec<i64> = super::call::run(store, Op::Ack, script, &cmd).await?;
        let reply = per_item(Op::Ack, reply, n)?;
        out.extend(reply.into_iter().map(ack_outcome));
    }
    Ok(out)
}

/// Consecutive items with the same result list and list TTL, as (list,
/// item count, TTL): ack.lua pushes each run with one LPUSH (and one
/// EXPIRE when the TTL is set) and takes each list key once.
fn runs(items: &[AckItem]) -> Vec<(&str, usize, u64)> {
    let mut runs: Vec<(&str, usize, u64)> = Vec::new();
    for item in items {
        match runs.last_mut() {
            Some((list, count, ttl))
                if *list == item.result_list && *ttl == item.result_ttl_seconds =>
            {
                *count += 1
            }
            _ => runs.push((&item.result_list, 1, item.result_ttl_seconds)),
        }
    }
    runs
}
