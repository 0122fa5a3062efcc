//! `ack` in the hash-tagged (cluster) layout: one atomic script for items whose result list shares the queue's slot, fence → push once → owner-checked drop for the others, then the per-request keys.
//!
//! Correctness (exactly one record per generation):
//!
//! - A list in the queue's slot (a `{<queue>}` tag in its name, or a name
//!   hashing there): ack.lua as in the Plain layout (`ack_tagged`), record,
//!   marker, claim drop and copies in one atomic script.
//! - A list in another slot: the terminal marker lives in the list's slot
//!   (`Keys::marker_for`), so "push once" is atomic there. (a)
//!   `ack_fence.lua`, read-only in the queue slot: does the caller hold the
//!   claim, is the generation ours somewhere (ack.lua's push condition);
//!   (b) `push_once.lua` in the list's slot, pushing only what the fence
//!   allows, each generation at most once (marker check, LPUSH, marker,
//!   EXPIRE); (c) `ack_drop.lua` in the queue slot, owner-checked: drops
//!   the caller's claims, takes pending copies, dead-letters items whose
//!   list is unusable. A crash between (b) and (c) leaves the claim: it
//!   lapses, the reclaimer puts it back, the next holder's record meets
//!   the live marker in (b) and is suppressed, and its ack drops the claim:
//!   still exactly one record (Go can publish twice here). A crash between
//!   (a) and (b) pushes nothing: the claim lapses and is redelivered.
//! - Then the per-request keys, which live in slots of their own:
//!   `request-active:<id>` and `request-cancel:<id>` deleted only where
//!   they hold this generation's token (`del_if.lua`, compare and delete
//!   in one step), payload keys where ack.lua would delete them. Best
//!   effort, after the record: a failure is only logged. That is safe:
//!   the record and marker are written, so the generation is answered
//!   whatever these keys hold; a leftover active key only lets a later
//!   cancel of this id mark an answered generation (no claim will ever
//!   read it: the marker suppresses a pending duplicate), a leftover cancel
//!   key names only this generation's token, and each expires on its own
//!   (the active key at the deadline, the cancel key after 7 days, a
//!   payload 10 minutes after the deadline).
//!
//! Every script here is safe to run twice (see each header), so a cluster
//! client that resends a call after a connection drop changes nothing.

use super::ack::one_script;
use super::push_once::{PushItem, Pushed, push_checked};
use crate::codec::{ack_outcome, per_item};
use crate::keys::QueueKeys;
use crate::slots::hash_slot;
use crate::store::{MAX_BATCH, RedisStore};
use claim_core::marker::record_digest;
use claim_core::store::{AckItem, AckOutcome};
use claim_core::{ClaimKey, Op, OwnerToken, StoreError};
use redis::RedisWrite;

use super::evalsha;

/// Bit of ack.lua's and ack_drop.lua's codes: the payload key goes.
const PAYLOAD_GOES: i64 = 16;

pub(crate) async fn ack(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[AckItem],
) -> Result<Vec<AckOutcome>, StoreError> {
    let keys = store.keys();
    let q = keys.queue(queue);
    let slot = hash_slot(q.pending.as_bytes());
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(MAX_BATCH) {
        let same: Vec<bool> = chunk
            .iter()
            .map(|i| hash_slot(keys.list(&i.result_list).as_bytes()) == slot)
            .collect();
        let (mut near, mut far): (Vec<&AckItem>, Vec<&AckItem>) = (Vec::new(), Vec::new());
        for (item, s) in chunk.iter().zip(&same) {
            if *s { near.push(item) } else { far.push(item) }
        }
        let near_codes = if near.is_empty() {
            Vec::new()
        } else {
            one_script(store, queue, owner, &near).await?
        };
        let far_codes = if far.is_empty() {
            Vec::new()
        } else {
            across(store, queue, &q, owner, &far).await?
        };
        let (mut near_codes, mut far_codes) = (near_codes.into_iter(), far_codes.into_iter());
        let mut codes = Vec::with_capacity(chunk.len());
        for same in &same {
            let code = if *same {
                near_codes.next()
            } else {
                far_codes.next()
            };
            codes.push(code.unwrap_or_default());
        }
        super::ack_keys::after_ack(store, chunk, &codes).await;
        out.extend(codes.into_iter().map(ack_outcome));
    }
    Ok(out)
}

/// Steps (a) to (c) for items whose list lies in another slot than the
/// queue; answers ack.lua's code per item.
async fn across(
    store: &RedisStore,
    queue: &str,
    q: &QueueKeys,
    owner: &OwnerToken,
    items: &[&AckItem],
) -> Result<Vec<i64>, StoreError> {
    let fence = fence(store, q, owner, items).await?;
    let digests: Vec<String> = items
        .iter()
        .map(|i| record_digest(i.record.as_bytes()))
        .collect();
    // One push_once call per (list, TTL), in first-seen order; records
    // keep their batch order within each list.
    let mut pushed: Vec<Option<Pushed>> = vec![None; items.len()];
    let mut groups: Vec<(&str, u64, Vec<usize>)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let list = item.result_list.as_str();
        let ttl = item.result_ttl_seconds;
        match groups.iter_mut().find(|(l, t, _)| *l == list && *t == ttl) {
            Some((_, _, members)) => members.push(i),
            None => groups.push((list, ttl, vec![i])),
        }
    }
    let config = &store.inner.config;
    for (list, ttl, members) in &groups {
        let push_items: Vec<PushItem<'_>> = members
            .iter()
            .map(|&i| PushItem {
                generation: &items[i].generation,
                record: items[i].record.as_bytes(),
                digest: &digests[i],
                score: items[i].score,
            })
            .collect();
        let refusal = config.result_list_refusal(queue, list);
        let answers = push_checked(
            store,
            Op::Ack,
            list,
            *ttl,
            refusal.as_deref(),
            &push_items,
            |j| fence[members[j]] & 2 != 0,
        )
        .await?;
        for (&i, answer) in members.iter().zip(answers) {
            pushed[i] = answer;
        }
    }
    let dropped = drop_claims(store, q, owner, items, &pushed).await?;
    Ok(pushed
        .iter()
        .zip(dropped)
        .map(|(p, code)| {
            code + match p {
                Some(Pushed::Pushed) => 1,
                Some(Pushed::OwnRecordLanded) => 8,
                _ => 0,
            }
        })
        .collect())
}

/// Step (a), `ack_fence.lua`: per item, 1 if the caller holds the claim,
/// plus 2 if the generation is ours somewhere.
async fn fence(
    store: &RedisStore,
    q: &QueueKeys,
    owner: &OwnerToken,
    items: &[&AckItem],
) -> Result<Vec<i64>, StoreError> {
    let script = &store.scripts().ack_fence;
    let bytes: usize = items.iter().map(|i| i.member.len() + 64).sum();
    let mut cmd = evalsha(script, 2, 1 + 2 * items.len(), bytes);
    cmd.arg(&q.pending).arg(&q.owners).arg(owner.as_str());
    for item in items {
        cmd.write_arg_fmt(ClaimKey(&item.generation));
        cmd.arg(item.member.as_bytes());
    }
    let reply: Vec<i64> = super::call::run(store, Op::Ack, script, &cmd).await?;
    per_item(Op::Ack, reply, items.len())
}

/// Step (c), `ack_drop.lua`: per item, ack.lua's bits 2, 4 and 16.
async fn drop_claims(
    store: &RedisStore,
    q: &QueueKeys,
    owner: &OwnerToken,
    items: &[&AckItem],
    pushed: &[Option<Pushed>],
) -> Result<Vec<i64>, StoreError> {
    let script = &store.scripts().ack_drop;
    let bytes: usize = items.iter().map(|i| i.member.len() + 96).sum();
    let mut cmd = evalsha(script, 6, 2 + 3 * items.len(), bytes);
    for key in q.all() {
        cmd.arg(key);
    }
    cmd.arg(owner.as_str()).arg(store.time_arg());
    for (item, p) in items.iter().zip(pushed) {
        cmd.write_arg_fmt(ClaimKey(&item.generation));
        cmd.arg(item.member.as_bytes());
        match p {
            Some(Pushed::Unusable(reason)) => cmd.arg(reason.as_str()),
            _ => cmd.arg(""),
        };
    }
    let reply: Vec<i64> = super::call::run(store, Op::Ack, script, &cmd).await?;
    per_item(Op::Ack, reply, items.len())
}

/// Whether ack.lua's or ack_drop.lua's `code` says the item's payload key goes.
pub(crate) fn payload_goes(code: i64) -> bool {
    code & PAYLOAD_GOES != 0
}
