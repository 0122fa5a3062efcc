//! `claim`: runs `lua/claim.lua`, one call per [`MAX_BATCH`] items, arguments written in place.

use super::evalsha;
use super::release::release;
use crate::codec::claim_outcomes;
use crate::conn::Effect;
use crate::store::{MAX_BATCH, RedisStore};
use claim_core::ClaimKey;
use claim_core::store::{ClaimOutcome, ClaimRequest, generations_of};
use claim_core::{Op, OwnerToken, StoreError, wire};
use redis::{RedisWrite, Value};

/// Claims in calls of [`MAX_BATCH`]. When a later call fails, the claims
/// of the earlier ones are not orphaned: the batch is answered with them,
/// the failed and later items as `NotPending` (they are still pending, or
/// were released again if the failed call may have run).
pub(crate) async fn claim(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[ClaimRequest],
) -> Result<Vec<ClaimOutcome>, StoreError> {
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(MAX_BATCH) {
        match claim_chunk(store, queue, owner, chunk).await {
            Ok(outcomes) => out.extend(outcomes),
            Err(e) if out.is_empty() => return Err(e),
            Err(e) => {
                tracing::warn!(queue, error = %e, claimed = out.len(), "a later claim call failed; answering the earlier ones");
                if e.may_have_happened()
                    && let Err(e) = release(store, queue, owner, &generations_of(chunk)).await
                {
                    tracing::warn!(queue, error = %e, "release after an unknown claim outcome failed; the claims lapse after their lease");
                }
                out.resize(items.len(), ClaimOutcome::NotPending);
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// One script call; the layout is `lua/claim.lua`'s header.
async fn claim_chunk(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    chunk: &[ClaimRequest],
) -> Result<Vec<ClaimOutcome>, StoreError> {
    let keys = store.keys();
    let q = keys.queue(queue);
    let ttl = store.inner.config.lease_ttl_ms;
    let time = store.time_arg();
    let n = chunk.len();
    let bytes: usize = chunk.iter().map(|i| i.member.len() + 160).sum();
    let script = &store.scripts().claim;
    let mut cmd = evalsha(script, 7 + 2 * n, 4 + 3 * n, bytes);
    cmd.arg(&q.pending)
        .arg(&q.claimed)
        .arg(&q.owners)
        .arg(&q.index)
        .arg(&q.deliveries)
        .arg(keys.clock_side())
        .arg(&q.dead);
    for item in chunk {
        cmd.write_arg_fmt(keys.marker_key(&item.generation));
        cmd.write_arg_fmt(keys.cancel_key(&item.generation.id));
    }
    cmd.arg(owner.as_str())
        .arg(&time)
        .arg(ttl)
        .arg(keys.prefix().len());
    for item in chunk {
        cmd.arg(item.member.as_bytes());
    }
    for item in chunk {
        cmd.write_arg_fmt(ClaimKey(&item.generation));
    }
    for item in chunk {
        cmd.arg(&item.generation.token);
    }
    let reply: Vec<Value> = super::call::run(store, Op::Claim, script, &cmd).await?;
    let outcomes = claim_outcomes(&reply, n)?;
    forget_answered_payloads(store, chunk, &reply).await;
    Ok(outcomes)
}

/// Deletes the payloads stored apart of the copies `claim.lua` dropped as
/// answered and held by nobody (outcome 5): no ack is left to delete them.
/// Best effort: the generation is answered, so a failure only leaves the
/// key to its own expiry (the deadline plus ten minutes).
async fn forget_answered_payloads(store: &RedisStore, chunk: &[ClaimRequest], reply: &[Value]) {
    let keys: Vec<String> = chunk
        .iter()
        .zip(reply.chunks(4))
        .filter(|(_, v)| matches!(v[0], Value::Int(5)))
        .filter_map(|(item, _)| wire::parse_member(item.member.as_bytes()).ok()?.payload_ref)
        .map(|payload_ref| store.keys().payload(&payload_ref))
        .collect();
    if keys.is_empty() {
        return;
    }
    let mut pipe = redis::pipe();
    pipe.atomic().del(&keys).ignore();
    if store.explicit_now().is_some() {
        pipe.hdel(store.keys().clock_side(), &keys).ignore();
    }
    if let Err(e) = store
        .conn()
        .query::<()>(Op::Claim, Effect::Transaction, &pipe)
        .await
    {
        tracing::warn!(error = %e, keys = keys.len(), "deleting the payloads of answered copies failed; they expire ten minutes after their deadlines");
    }
}
