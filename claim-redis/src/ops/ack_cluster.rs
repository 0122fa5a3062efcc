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
//!   list is unusable. (c) ends a claim or copy only for a generation (b)
//!   answered (pushed, own record landed, suppressed) or the queue-slot
//!   marker says is answered: the fence is older than (c), and a copy a
//!   reclaimer returned after a fence that said "not ours" (nothing
//!   pushed) is the request's only copy. With `replica_acks` > 0 a `WAIT`
//!   on each list's primary that took a push runs between (b) and (c); a
//!   push it did not see replicated counts as not answered in (c) and its
//!   marker is not copied: the claim stays, lapses, and the reclaimer
//!   finds the list-slot marker (dropped) or, after a failover lost the
//!   record, redelivers it. A crash between (b) and (c) leaves the claim: it
//!   lapses, the reclaimer puts it back, the next holder's record meets
//!   the live marker in (b) and is suppressed, and its ack drops the claim:
//!   still exactly one record (Go can publish twice here). A crash between
//!   (a) and (b) pushes nothing: the claim lapses and is redelivered.
//! - The queue's slot keeps a copy of each marker (`marker_for` with the
//!   pending key): the one-script path writes it as its marker, (c) copies
//!   the list-slot marker there (same value and expiry). Claim, reclaim and
//!   promotion read it in their own slot, and (a) answers a late ack of an
//!   answered generation from it, whichever list that ack names, so a
//!   second list never gets a second record. Only inside the crash window
//!   (after (b), before (c)) is the copy missing; the redelivered claim's
//!   ack then meets the list-slot marker in (b) and its (c) writes the copy.
//! - Then the per-request keys, which live in slots of their own:
//!   `request-active:<id>` and `request-cancel:<id>` deleted only where
//!   they hold this generation's token (compare and delete in one step,
//!   one `node_del_if.lua` call per node, `del_if.lua` per key for what a
//!   node refuses), payload keys where ack.lua would delete them. Best
//!   effort, after the record: a failure is only logged. Across slots the
//!   producer keys go concurrently with (c) (the record is written by
//!   then), the payload keys after it (it says which). That is safe:
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

use super::ack::{ack_args, ack_bytes, ack_list_keys, ack_runs};
use super::call::{self, evalsha};
use super::cluster::push_once::{PushAnswer, PushItem, Pushed, push_checked};
use super::cluster::request_keys::{PAYLOAD_KEYS, PRODUCER_KEYS, after_ack};
use crate::codec::packed_codes;
use crate::keys::QueueKeys;
use crate::slots::hash_slot;
use crate::state::RedisStore;
use claim_core::marker::record_digest;
use claim_core::store::AckItem;
use claim_core::{ClaimKey, Op, OwnerToken, StoreError};
use redis::RedisWrite;

/// ack_fence.lua's bits: ours somewhere (may push), answered (a live
/// queue-slot marker), by this very record, held by another owner.
const OURS_SOMEWHERE: i64 = 2;
const ANSWERED: i64 = 4;
const OWN_RECORD: i64 = 8;
const HELD_ELSEWHERE: i64 = 16;

/// Acks one chunk of `queue` (its keys `q`): the items whose list shares
/// the queue's slot in one script, the others across slots; answers
/// ack.lua's code per item.
pub(crate) async fn one_call(
    store: &RedisStore,
    (queue, q): (&str, &QueueKeys),
    owner: &OwnerToken,
    chunk: &[AckItem],
) -> Result<Vec<i64>, StoreError> {
    let keys = store.keys();
    let slot = hash_slot(q.pending.as_bytes());
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
        let codes = same_slot(store, queue, owner, &near).await?;
        after_ack(store, &near, &codes, PRODUCER_KEYS | PAYLOAD_KEYS).await;
        codes
    };
    let far_codes = if far.is_empty() {
        Vec::new()
    } else {
        across(store, queue, q, owner, &far).await?
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
    Ok(codes)
}

/// Runs `ack_tagged` (ack.lua's same-slot variant) on items whose list
/// shares the queue's slot and answers its code per item: only the
/// queue's slot's keys (the lists, the queue-slot markers), no producer or
/// payload keys: the caller deletes those from bits 1 and 16.
async fn same_slot(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    chunk: &[&AckItem],
) -> Result<Vec<i64>, StoreError> {
    let keys = store.keys();
    let q = keys.queue(queue);
    let n = chunk.len();
    let runs = ack_runs(chunk);
    let script = &store.scripts().ack_tagged;
    let mut cmd = evalsha(
        script,
        7 + runs.len() + n,
        6 + 3 * runs.len() + 6 * n,
        ack_bytes(chunk),
    );
    for key in q.all() {
        cmd.arg(key);
    }
    cmd.arg(keys.clock_side_for(&q.pending));
    ack_list_keys(&mut cmd, store, &runs);
    // The queue-slot marker (every list here shares that slot, so it is
    // the list's marker too): the one the split path reads and writes.
    for item in chunk {
        cmd.write_arg_fmt(keys.marker_key_for(&q.pending, &item.generation));
    }
    ack_args(&mut cmd, store, (queue, owner), &runs, chunk);
    let reply = call::run(store, Op::Ack, script, &cmd).await?;
    packed_codes(Op::Ack, &reply, n)
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
    let digests: Vec<String> = items
        .iter()
        .map(|i| record_digest(i.record.as_bytes()))
        .collect();
    let fence = fence(store, q, owner, items, &digests).await?;
    let mut answers: Vec<PushAnswer> = fence
        .iter()
        .map(|&code| PushAnswer {
            // Answered already (the queue-slot marker): nothing to push.
            pushed: (code & ANSWERED != 0).then_some(if code & OWN_RECORD != 0 {
                Pushed::OwnRecordLanded
            } else {
                Pushed::Suppressed
            }),
            marker: String::new(),
        })
        .collect();
    // One push_once call per (list, TTL), in first-seen order, for the
    // items not answered; records keep their batch order within each list.
    let mut groups: Vec<(&str, u64, Vec<usize>)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if fence[i] & ANSWERED != 0 {
            continue;
        }
        let list = item.result_list.as_str();
        let ttl = claim_core::routing::clamp_ttl(item.result_ttl_seconds);
        match groups.iter_mut().find(|(l, t, _)| *l == list && *t == ttl) {
            Some((_, _, members)) => members.push(i),
            None => groups.push((list, ttl, vec![i])),
        }
    }
    // Lists lie in slots (on a cluster, nodes) of their own: their pushes
    // run concurrently; one list's groups run in order.
    let mut lists: Vec<&str> = groups.iter().map(|(l, _, _)| *l).collect();
    lists.sort_unstable();
    lists.dedup();
    let (fence, digests, groups) = (&fence, &digests, &groups);
    let per_list = lists.into_iter().map(|list| async move {
        let mut out = Vec::new();
        for (_, ttl, members) in groups.iter().filter(|(l, _, _)| *l == list) {
            let push_items: Vec<PushItem<'_>> = members
                .iter()
                .map(|&i| PushItem {
                    generation: &items[i].generation,
                    record: items[i].record.as_bytes(),
                    digest: &digests[i],
                    other_claim_deadline: other_claim_deadline(items[i], fence[i]),
                })
                .collect();
            let refusal = store.list_refusal(queue, list);
            let pushed = push_checked(
                store,
                Op::Ack,
                list,
                *ttl,
                refusal.as_deref(),
                &push_items,
                |j| fence[members[j]] & OURS_SOMEWHERE != 0,
            )
            .await?;
            out.push((members, pushed));
        }
        Ok::<_, StoreError>(out)
    });
    for (members, pushed) in futures::future::try_join_all(per_list)
        .await?
        .into_iter()
        .flatten()
    {
        for (&i, answer) in members.iter().zip(pushed) {
            answers[i] = answer;
        }
    }
    // With replica_acks, a record this ack pushed must be on replicas
    // before its claim goes (a failover could lose it after the drop).
    let replicated = replicated_lists(store, items, &answers).await;
    let answered: Vec<bool> = items
        .iter()
        .zip(answers.iter_mut())
        .map(|(item, a)| match a.pushed {
            Some(Pushed::Pushed) if !replicated.contains(&item.result_list.as_str()) => {
                // Not answered for the drop, and no queue-slot copy of its
                // marker: the claim lapses and the reclaimer decides.
                a.marker.clear();
                false
            }
            Some(Pushed::Pushed | Pushed::OwnRecordLanded | Pushed::Suppressed) => true,
            _ => false,
        })
        .collect();
    // The records are written: the producer keys of the pushed items can
    // go while the claims are dropped; the payload keys wait for the drop,
    // which says which go.
    let pushed: Vec<i64> = answers
        .iter()
        .map(|a| i64::from(a.pushed == Some(Pushed::Pushed)))
        .collect();
    let (dropped, ()) = futures::join!(
        drop_claims(store, q, owner, items, &answers, &answered),
        after_ack(store, items, &pushed, PRODUCER_KEYS)
    );
    let dropped = dropped?;
    after_ack(store, items, &dropped, PAYLOAD_KEYS).await;
    Ok(answers
        .iter()
        .zip(dropped)
        .map(|(a, code)| {
            code + match a.pushed {
                Some(Pushed::Pushed) => 1,
                Some(Pushed::OwnRecordLanded) => 8,
                _ => 0,
            }
        })
        .collect())
}

/// What the list-slot marker of `item` must outlive ([`PushItem`]): where
/// the fence found another owner holding the claim, that claim, so the
/// marker follows the member's deadline; otherwise nothing (the caller's
/// claim is dropped in step (c), a pending copy too), and it lives the
/// dedup TTL. A claim taken between the fence and the drop is guarded by
/// the queue-slot copy ack_drop.lua writes.
fn other_claim_deadline(item: &AckItem, fence: i64) -> i64 {
    if fence & HELD_ELSEWHERE != 0 {
        item.member.deadline().unwrap_or(0)
    } else {
        0
    }
}

/// Step (a), `ack_fence.lua`: per item, 1 if the caller holds the claim,
/// plus [`OURS_SOMEWHERE`], plus [`ANSWERED`] and [`OWN_RECORD`] from the
/// queue-slot marker, plus [`HELD_ELSEWHERE`].
async fn fence(
    store: &RedisStore,
    q: &QueueKeys,
    owner: &OwnerToken,
    items: &[&AckItem],
    digests: &[String],
) -> Result<Vec<i64>, StoreError> {
    let keys = store.keys();
    let script = &store.scripts().ack_fence;
    let n = items.len();
    let bytes: usize = items.iter().map(|i| i.member.len() + 160).sum();
    let mut cmd = evalsha(script, 2 + n, 2 + 3 * n, bytes);
    cmd.arg(&q.pending).arg(&q.owners);
    for item in items {
        cmd.write_arg_fmt(keys.marker_key_for(&q.pending, &item.generation));
    }
    cmd.arg(owner.as_str()).arg(store.time_arg());
    for (item, digest) in items.iter().zip(digests) {
        cmd.write_arg_fmt(ClaimKey(&item.generation));
        cmd.arg(item.member.as_bytes()).arg(digest.as_str());
    }
    call::run_per_item(store, Op::Ack, script, &cmd, n).await
}

/// Step (c), `ack_drop.lua`: per item, ack.lua's bits 2, 4 and 16; the
/// list-slot markers copied into the queue's slot.
async fn drop_claims(
    store: &RedisStore,
    q: &QueueKeys,
    owner: &OwnerToken,
    items: &[&AckItem],
    answers: &[PushAnswer],
    answered: &[bool],
) -> Result<Vec<i64>, StoreError> {
    let keys = store.keys();
    let script = &store.scripts().ack_drop;
    let n = items.len();
    let bytes: usize = items.iter().map(|i| i.member.len() + 200).sum();
    let mut cmd = evalsha(script, 6 + n, 4 + 5 * n, bytes);
    for key in q.all() {
        cmd.arg(key);
    }
    for item in items {
        cmd.write_arg_fmt(keys.marker_key_for(&q.pending, &item.generation));
    }
    cmd.arg(owner.as_str())
        .arg(store.time_arg())
        .arg(store.ttl_slack())
        .arg(store.inner.config.result_dedup_ttl_ms);
    for ((item, answer), answered) in items.iter().zip(answers).zip(answered) {
        cmd.write_arg_fmt(ClaimKey(&item.generation));
        cmd.arg(item.member.as_bytes());
        match &answer.pushed {
            Some(Pushed::Unusable(reason)) => cmd.arg(reason.as_str()),
            _ => cmd.arg(""),
        };
        cmd.arg(answer.marker.as_str());
        cmd.arg(if *answered { "1" } else { "0" });
    }
    call::run_per_item(store, Op::Ack, script, &cmd, n).await
}

/// The result lists whose pushes by this ack are on `replica_acks`
/// replicas: every list when `replica_acks` is 0; else those of a `WAIT`
/// on the list's primary that reached enough replicas, one per list that
/// took a push (before the drop, so a claim is never dropped for a record
/// only the primary holds). A list without a push needs no `WAIT`.
async fn replicated_lists<'a>(
    store: &RedisStore,
    items: &[&'a AckItem],
    answers: &[PushAnswer],
) -> Vec<&'a str> {
    let mut lists: Vec<&str> = items.iter().map(|i| i.result_list.as_str()).collect();
    lists.sort_unstable();
    lists.dedup();
    if store.inner.replica_acks == 0 {
        return lists;
    }
    let pushed_to = |list: &str| {
        items
            .iter()
            .zip(answers)
            .any(|(i, a)| i.result_list == list && a.pushed == Some(Pushed::Pushed))
    };
    let waits = lists.into_iter().map(|list| async move {
        let ok = !pushed_to(list)
            || store
                .wait_replicated(Op::Ack, &store.keys().list(list))
                .await;
        ok.then_some(list)
    });
    futures::future::join_all(waits)
        .await
        .into_iter()
        .flatten()
        .collect()
}
