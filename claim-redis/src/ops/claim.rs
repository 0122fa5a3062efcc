//! `claim`: runs `lua/claim.lua`, one call per [`MAX_BATCH`](crate::state::MAX_BATCH) items, arguments written in place; the hash-tagged layout: `cluster::claim`.

use super::call::{self, evalsha};
use super::claim_batches::{Chunk, ClaimChunk, Outcomes, answered_payload_keys, claim_in_batches};
use super::cluster;
use super::script_args::claim_item_args;
use crate::codec::claim_reply;
use crate::conn::Effect;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::store::{ClaimOutcome, ClaimRequest};
use claim_core::{Op, OwnerToken, StoreError};
use redis::{RedisWrite, Value};

/// Claims in calls of [`MAX_BATCH`](crate::state::MAX_BATCH)
/// ([`claim_in_batches`] says what a failing later call answers).
pub(crate) async fn claim(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[ClaimRequest],
) -> Result<Vec<ClaimOutcome>, StoreError> {
    match store.layout() {
        KeyLayout::Plain => claim_in_batches::<Plain>(store, queue, owner, items).await,
        KeyLayout::HashTagged => {
            claim_in_batches::<cluster::claim::HashTagged>(store, queue, owner, items).await
        }
    }
}

/// The plain layout's claim call.
struct Plain;

impl ClaimChunk for Plain {
    /// One script call; the layout is `lua/claim.lua`'s header.
    async fn claim_chunk((store, queue, owner, chunk): Chunk<'_>) -> Outcomes {
        let keys = store.keys();
        let q = keys.queue(queue);
        let ttl = store.inner.config.lease_ttl_ms;
        let time = store.time_arg();
        let n = chunk.len();
        let bytes: usize = chunk.iter().map(|i| i.member.len() + 160).sum();
        let script = &store.scripts().claim;
        let mut cmd = evalsha(script, 7 + 2 * n, 4 + 4 * n, bytes);
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
        claim_item_args(&mut cmd, chunk);
        let reply: Value = call::run(store, Op::Claim, script, &cmd).await?;
        let reply = claim_reply(&reply, n)?;
        forget_answered_payloads(store, chunk, &reply.answered_unheld).await;
        Ok(reply.outcomes)
    }
}

/// Deletes the payloads stored apart of the copies `claim.lua` dropped as
/// answered and held by nobody (outcome 5): no ack is left to delete them.
/// Best effort: the generation is answered, so a failure only leaves the
/// key to its own expiry (the deadline plus ten minutes).
async fn forget_answered_payloads(store: &RedisStore, chunk: &[ClaimRequest], answered: &[usize]) {
    let keys = answered_payload_keys(store, chunk, answered);
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
