//! `claim`: runs `lua/claim.lua` (its header is the layout), one call per [`MAX_BATCH`] items, arguments written in place; the hash-tagged layout's call is `claim_cluster`. Alike in both layouts: the earlier calls' claims kept when a later one fails, unkeyable generations answered without a call, the payloads of copies dropped as answered deleted.

use super::call::{self, evalsha};
use super::claim_cluster;
use super::cluster::request_keys;
use super::release::release;
use crate::codec::claim_reply;
use crate::conn::Effect;
use crate::keys::KeyLayout;
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::store::{ClaimOutcome, ClaimRequest, generations_of};
use claim_core::{ClaimKey, Op, OwnerToken, StoreError, wire};
use redis::{RedisWrite, Value};

/// Claims `items` in calls of [`MAX_BATCH`]. When a later call fails, the claims of the
/// earlier ones are not orphaned: the batch is answered with them, the
/// failed and later items as `NotPending` (they are still pending, or were
/// released again if the failed call may have run). Items whose generation
/// cannot be keyed ([`claim_core::Generation::is_keyable`]) are answered
/// `NotPending` and never reach the script, so no claim key with two NULs
/// (the script's placeholder) can be written.
pub(crate) async fn claim(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[ClaimRequest],
) -> Result<Vec<ClaimOutcome>, StoreError> {
    if items.iter().all(|i| i.generation.is_keyable()) {
        return batches(store, queue, owner, items).await;
    }
    let keyable: Vec<ClaimRequest> = items
        .iter()
        .filter(|i| i.generation.is_keyable())
        .cloned()
        .collect();
    let mut answers = if keyable.is_empty() {
        Vec::new()
    } else {
        batches(store, queue, owner, &keyable).await?
    }
    .into_iter();
    let answer = |i: &ClaimRequest| match i.generation.is_keyable() {
        true => answers.next().unwrap_or(ClaimOutcome::NotPending),
        false => ClaimOutcome::NotPending,
    };
    Ok(items.iter().map(answer).collect())
}

async fn batches(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[ClaimRequest],
) -> Result<Vec<ClaimOutcome>, StoreError> {
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(MAX_BATCH) {
        let outcomes = match store.layout() {
            KeyLayout::Plain => run(store, &claim_cmd(store, queue, owner, chunk), chunk).await,
            KeyLayout::HashTagged => tagged_call(store, queue, owner, chunk).await,
        };
        match outcomes {
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

/// A claim.lua call for `chunk` (its header is the layout), ready to run
/// in the plain layout: the queue's KEYS, then (plain) each item's marker
/// and cancel key, then the ARGV both layouts take; the hash-tagged layout
/// adds what it read of those keys first ([`tagged_call`]).
fn claim_cmd(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    chunk: &[ClaimRequest],
) -> redis::Cmd {
    let keys = store.keys();
    let q = keys.queue(queue);
    let n = chunk.len();
    let plain = store.layout() == KeyLayout::Plain;
    let (item_keys, item_args, item_bytes) = if plain { (2, 4, 160) } else { (0, 7, 200) };
    let bytes: usize = chunk.iter().map(|i| i.member.len() + item_bytes).sum();
    let script = &store.scripts().claim;
    let mut cmd = evalsha(script, 7 + item_keys * n, 4 + item_args * n, bytes);
    cmd.arg(&q.pending)
        .arg(&q.claimed)
        .arg(&q.owners)
        .arg(&q.index)
        .arg(&q.deliveries)
        .arg(keys.clock_side_for(&q.pending))
        .arg(&q.dead);
    if plain {
        for item in chunk {
            cmd.write_arg_fmt(keys.marker_key(&item.generation));
            cmd.write_arg_fmt(keys.cancel_key(&item.generation.id));
        }
    }
    cmd.arg(owner.as_str())
        .arg(store.time_arg())
        .arg(store.inner.config.lease_ttl_ms)
        .arg(keys.prefix().len());
    // Per item, in blocks: every member, then every claim key, then every
    // request token, then every deadline (the lease follows it, not the
    // score: [`wire::member_deadline`], 0 when it cannot be read).
    for item in chunk {
        cmd.arg(item.member.as_bytes());
    }
    for item in chunk {
        cmd.write_arg_fmt(ClaimKey(&item.generation));
    }
    for item in chunk {
        cmd.arg(&item.generation.token);
    }
    for item in chunk {
        cmd.arg(item.member.deadline().unwrap_or(0));
    }
    cmd
}

/// The hash-tagged layout's call: claim.lua on the queue's keys alone,
/// with what [`claim_cluster::read_first`] read of each item's keys in
/// other slots as its last arguments.
async fn tagged_call(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    chunk: &[ClaimRequest],
) -> Result<Vec<ClaimOutcome>, StoreError> {
    let read = claim_cluster::read_first(store, queue, chunk).await?;
    let mut cmd = claim_cmd(store, queue, owner, chunk);
    for arg in read {
        cmd.arg(arg);
    }
    run(store, &cmd, chunk).await
}

/// Runs a claim.lua call for `chunk` ([`claim_cmd`]) and answers its
/// outcomes, after deleting the payloads stored apart of the copies it
/// dropped as answered and held by nobody (outcome 5): no ack is left to
/// delete them. Best effort: the generation is answered, so a failure only
/// leaves a key to its own expiry (the deadline plus ten minutes).
async fn run(
    store: &RedisStore,
    cmd: &redis::Cmd,
    chunk: &[ClaimRequest],
) -> Result<Vec<ClaimOutcome>, StoreError> {
    let reply: Value = call::run(store, Op::Claim, &store.scripts().claim, cmd).await?;
    let reply = claim_reply(&reply, chunk.len())?;
    let answered = reply.answered_unheld.iter().filter_map(|&i| chunk.get(i));
    let payloads: Vec<String> = answered
        .filter_map(|item| wire::parse_member(item.member.as_bytes()).ok()?.payload_ref)
        .map(|payload_ref| store.keys().payload(&payload_ref))
        .collect();
    if payloads.is_empty() {
        return Ok(reply.outcomes);
    }
    if store.layout() == KeyLayout::HashTagged {
        // Each in a slot of its own: one call per node, per key what a
        // node refuses (`request_keys::delete`).
        let targets = payloads.into_iter().map(|k| (k, String::new())).collect();
        request_keys::delete(store, Op::Claim, targets).await;
        return Ok(reply.outcomes);
    }
    let mut pipe = redis::pipe();
    pipe.atomic().del(&payloads).ignore();
    if store.explicit_now().is_some() {
        pipe.hdel(store.keys().clock_side(), &payloads).ignore();
    }
    if let Err(e) = store
        .conn()
        .query::<()>(Op::Claim, Effect::Transaction, &pipe)
        .await
    {
        tracing::warn!(error = %e, keys = payloads.len(), "deleting the payloads of answered copies failed; they expire ten minutes after their deadlines");
    }
    Ok(reply.outcomes)
}
