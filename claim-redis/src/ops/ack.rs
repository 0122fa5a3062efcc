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
        let mut cmd = evalsha(
            script,
            7 + runs.len() + 3 * n,
            6 + 2 * runs.len() + 6 * n,
            bytes,
        );
        for key in q.all() {
            cmd.arg(key);
        }
        cmd.arg(keys.clock_side());
        for (list, _) in &runs {
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
        cmd.arg(owner.as_str())
            .arg(&time)
            .arg(config.result_dedup_ttl_ms)
            .arg(store.ttl_slack())
            .arg(runs.len())
            .arg(keys.prefix().len());
        for (list, count) in &runs {
            let refusal = config.result_list_refusal(queue, list);
            cmd.arg(*count).arg(refusal.as_deref().unwrap_or(""));
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
        let reply: Vec<i64> = store.conn().evalsha(Op::Ack, script, &cmd).await?;
        let reply = per_item(Op::Ack, reply, n)?;
        out.extend(reply.into_iter().map(ack_outcome));
    }
    Ok(out)
}

/// Consecutive items with the same result list, as (list, item count):
/// ack.lua pushes each run with one LPUSH and takes each list key once.
fn runs(items: &[AckItem]) -> Vec<(&str, usize)> {
    let mut runs: Vec<(&str, usize)> = Vec::new();
    for item in items {
        match runs.last_mut() {
            Some((list, count)) if *list == item.result_list => *count += 1,
            _ => runs.push((&item.result_list, 1)),
        }
    }
    runs
}
