//! `claim`: runs `lua/claim.lua`, one call per [`MAX_BATCH`] items, arguments written in place.

use super::release::release;
use super::{evalsha, per_request};
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
    if !items.iter().all(|i| i.generation.is_keyable()) {
        return claim_keyable(store, queue, owner, items).await;
    }
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

/// Claims the items whose generation can be keyed
/// ([`claim_core::Generation::is_keyable`]); the others are answered
/// `NotPending` and never reach the script, so no claim key with two NULs
/// (the script's placeholder) can be written.
async fn claim_keyable(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[ClaimRequest],
) -> Result<Vec<ClaimOutcome>, StoreError> {
    let keyable: Vec<ClaimRequest> = items
        .iter()
        .filter(|i| i.generation.is_keyable())
        .cloned()
        .collect();
    let mut answers = if keyable.is_empty() {
        Vec::new()
    } else {
        Box::pin(claim(store, queue, owner, &keyable)).await?
    }
    .into_iter();
    let answer = |i: &ClaimRequest| match i.generation.is_keyable() {
        true => answers.next().unwrap_or(ClaimOutcome::NotPending),
        false => ClaimOutcome::NotPending,
    };
    Ok(items.iter().map(answer).collect())
}

/// One script call; the layout is `lua/claim.lua`'s header.
async fn claim_chunk(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    chunk: &[ClaimRequest],
) -> Result<Vec<ClaimOutcome>, StoreError> {
    if store.keys().tagged() {
        return claim_chunk_tagged(store, queue, owner, chunk).await;
    }
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
    per_item_args(&mut cmd, chunk);
    let reply: Vec<Value> = super::call::run(store, Op::Claim, script, &cmd).await?;
    let outcomes = claim_outcomes(&reply, n)?;
    forget_answered_payloads(store, chunk, &reply).await;
    Ok(outcomes)
}

/// One script call in the hash-tagged layout: the per-request keys (each
/// item's marker, in its result list's slot, and `request-cancel:<id>`)
/// are read first with per-slot commands ([`per_request`]) and handed to
/// `lua/claim.lua` as arguments; the script then runs on the queue's keys
/// alone, in the queue's slot.
///
/// Correctness of the split: the reads are not atomic with the script. A
/// marker written in between (an ack of this generation) is missed: the
/// copy is claimed as if unanswered, and the holder's ack is suppressed
/// by the marker (the push is marker-checked in the list's slot), so no
/// second record; a marker expiring in between only suppresses a copy a
/// moment early, as a claim a moment earlier would. A cancel written in
/// between is missed by this claim and seen by the holder's next
/// `cancelled` check, as a cancel right after a claim is. Nothing is
/// written before the script, so a crash between the reads and the script
/// changes nothing.
async fn claim_chunk_tagged(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    chunk: &[ClaimRequest],
) -> Result<Vec<ClaimOutcome>, StoreError> {
    let keys = store.keys();
    let config = &store.inner.config;
    let q = keys.queue(queue);
    let n = chunk.len();
    // Per item: its cancel key, then its marker's candidate keys.
    let mut per_item: Vec<String> = Vec::with_capacity(3 * n);
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(n);
    for item in chunk {
        let parsed = wire::parse_member(item.member.as_bytes()).ok();
        let start = per_item.len();
        per_item.push(keys.cancel(&item.generation.id));
        per_item.extend(per_request::marker_candidates(
            store,
            queue,
            parsed.as_ref(),
            &item.generation,
        ));
        spans.push((start, per_item.len()));
    }
    let (values, kinds) = per_request::strings(store, Op::Claim, &per_item, true).await?;
    let cancels: Vec<String> = spans.iter().map(|&(s, _)| per_item[s].clone()).collect();
    let live = match store.explicit_now() {
        None => vec![true; n],
        Some(now) => per_request::side_expiries(store, Op::Claim, &cancels)
            .await?
            .into_iter()
            .map(|expiry| expiry.is_none_or(|e| e > now.0))
            .collect(),
    };
    let script = &store.scripts().claim;
    let bytes: usize = chunk.iter().map(|i| i.member.len() + 200).sum();
    let mut cmd = evalsha(script, 7, 4 + 7 * n, bytes);
    cmd.arg(&q.pending)
        .arg(&q.claimed)
        .arg(&q.owners)
        .arg(&q.index)
        .arg(&q.deliveries)
        .arg(keys.clock_side_for(&q.pending))
        .arg(&q.dead);
    cmd.arg(owner.as_str())
        .arg(store.time_arg())
        .arg(config.lease_ttl_ms)
        .arg(keys.prefix().len());
    per_item_args(&mut cmd, chunk);
    for &(start, end) in &spans {
        let marker = per_request::best_marker(store, &values[start + 1..end]);
        cmd.arg(marker.unwrap_or_default());
    }
    for (i, &(start, _)) in spans.iter().enumerate() {
        let cancel = values[start].as_deref().filter(|_| live[i]);
        cmd.arg(cancel.unwrap_or_default());
    }
    for &(start, end) in &spans {
        // As claim.lua words it for the plain layout: the key without the prefix.
        let why = (start..end).find_map(|j| {
            let kind = kinds[j].as_deref()?;
            let key = &per_item[j][keys.prefix().len()..];
            Some(format!("key \"{key}\" holds a {kind}, not a string"))
        });
        cmd.arg(why.unwrap_or_default());
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
    if store.keys().tagged() {
        // Per-request keys in slots of their own: one delete per key.
        let targets = keys.into_iter().map(|k| (k, String::new())).collect();
        super::del_if_keys::delete(store, Op::Claim, targets).await;
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

/// The ARGV both claim scripts take per item, in blocks: every member, then
/// every claim key, then every request token, then every deadline (the
/// lease follows it, not the score: [`wire::member_deadline`], 0 when it
/// cannot be read).
fn per_item_args(cmd: &mut redis::Cmd, chunk: &[ClaimRequest]) {
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
        cmd.arg(wire::member_deadline(item.member.as_bytes()).unwrap_or(0));
    }
}
