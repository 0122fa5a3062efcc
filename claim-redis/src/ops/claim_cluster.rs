//! `claim` in the hash-tagged layout: the per-request keys (markers, `request-cancel:`) read first (one call per node, per slot what a node refuses: `cluster::request_keys`), then `lua/claim.lua` on the queue's keys alone, in the queue's slot.

use super::call::{self, evalsha};
use super::claim::{answered_payload_keys, claim_item_args};
use super::cluster::request_keys;
use crate::codec::claim_reply;
use crate::state::RedisStore;
use claim_core::store::{ClaimOutcome, ClaimRequest};
use claim_core::{Op, OwnerToken, StoreError, wire};
use redis::Value;

/// One script call in the hash-tagged layout: the per-request keys (each
/// item's marker, in its result list's slot, and `request-cancel:<id>`)
/// are read first, one call per node ([`request_keys`]), and handed to
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
pub(crate) async fn one_call(
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
        per_item.extend(request_keys::marker_candidates(
            store,
            queue,
            parsed.as_ref(),
            &item.generation,
        ));
        spans.push((start, per_item.len()));
    }
    let (values, kinds) = request_keys::strings(store, Op::Claim, &per_item, true).await?;
    let cancels: Vec<String> = spans.iter().map(|&(s, _)| per_item[s].clone()).collect();
    let live = match store.explicit_now() {
        None => vec![true; n],
        Some(now) => request_keys::side_expiries(store, Op::Claim, &cancels)
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
    claim_item_args(&mut cmd, chunk);
    for &(start, end) in &spans {
        let marker = request_keys::best_marker(store, &values[start + 1..end]);
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
    let reply: Value = call::run(store, Op::Claim, script, &cmd).await?;
    let reply = claim_reply(&reply, n)?;
    forget_answered_payloads(store, chunk, &reply.answered_unheld).await;
    Ok(reply.outcomes)
}

/// Deletes the payloads stored apart of the copies `claim.lua` dropped as
/// answered and held by nobody, one call per node (per key what a node
/// refuses; [`request_keys::delete`]). Best effort, as in the plain layout.
async fn forget_answered_payloads(store: &RedisStore, chunk: &[ClaimRequest], answered: &[usize]) {
    let targets: Vec<(String, String)> = answered_payload_keys(store, chunk, answered)
        .into_iter()
        .map(|k| (k, String::new()))
        .collect();
    if !targets.is_empty() {
        request_keys::delete(store, Op::Claim, targets).await;
    }
}
