//! `reclaim_expired`'s second phase in the hash-tagged layout: markers read per slot, `DELIVERY_LIMIT` records pushed once in their list's slot, then `lua/reclaim.lua` in the queue's slot, then the answered generations' per-request keys.
//!
//! Steps for the chosen expired claims:
//! 1. read their owner entries and members (the queue's slot, one MULTI;
//!    `leases::reclaim_expired` reads them for both layouts), then each
//!    generation's marker in its result list's slot
//!    ([`request_keys`]);
//! 2. for each claim at the delivery limit whose generation is not
//!    answered and whose list (and list TTL: `StoreConfig::route`) is not
//!    refused by name (`RedisStore::list_refusal`), push the
//!    `DELIVERY_LIMIT` record, per list and TTL, with the "ack" helper's
//!    [`push_once`] (marker check, push,
//!    marker, one script in the list's slot);
//! 3. run `reclaim.lua` on the queue's keys: it re-checks each claim
//!    (owner entry unchanged, lease expired) and redelivers it, drops it
//!    as answered (live marker), or dead-letters it: with the record pushed
//!    in step 2 (`x`), or with the reason its list cannot take one (`u`);
//! 4. delete the payload key and the producer keys holding this token of
//!    each generation the script ended answered, compare-and-delete, one
//!    call per node (per key what a node refuses: `del_if.lua`,
//!    [`request_keys::delete`]), best effort.
//!
//! Isolation. Steps 1 and 2 reach slots other than the queue's (each
//! member's result list), so one member's list can fail where the others'
//! do not (its node down, a name the cluster refuses). A failing marker
//! read or push is retried per group of claims that share the failing
//! slots (per list for pushes; one by one when the error is permanent, so
//! it cannot come from a node); the claims of a group that still fails are
//! left out of step 3, expired as they were, for a later pass, and a
//! warning names them. The call fails only when no claim could go on.
//!
//! Correctness of the split. A marker written between step 1 and step 3
//! (a stale owner's ack) is missed by the script: the claim is redelivered
//! instead of dropped, and the redelivered copy is suppressed at claim or
//! ack by that marker: no second record. A crash between step 2 and step
//! 3 leaves the claim expired with its record pushed: the next pass reads
//! the live marker and drops the claim as answered (the dead entry, an
//! inspection copy, is then missing; the one record exists). A renew
//! landing between step 1 and step 2 keeps a holder alive whose
//! generation the record just answered: the script leaves that claim
//! alone, and the holder's ack is suppressed by the marker (push once):
//! still exactly one record. A crash before step 4 leaves keys that expire
//! on their own (the payload ten minutes after the deadline, the producer
//! keys at it). Every step is safe to run twice: push once recognises its
//! own record, the script re-checks every claim, deletes are idempotent.

use super::call::Call;
use super::cluster::push_once::{PushItem, Pushed, push_once};
use super::cluster::request_keys;
use crate::codec::{ReclaimAs, dead_json, explicit_time_arg, parse_owner};
use crate::conn::{Effect, bad_reply};
use crate::keys::QueueKeys;
use crate::slots::hash_slot;
use crate::state::RedisStore;
use claim_core::marker::{parse_marker, record_digest};
use claim_core::model::{delivery_limit_reason, delivery_limit_record, undeliverable_limit_reason};
use claim_core::{Generation, Millis, Op, Record, StoreError, wire};
use redis::Value;

const OP: Op = Op::ReclaimExpired;

/// A marker value that reads as live (no expiry digits): a generation
/// push once found answered by another record.
const ANSWERED: &str = "answered";

/// What one chosen claim becomes in the script.
struct Item {
    /// A read or push for it failed: left out of this pass.
    skip: bool,
    key: String,
    /// Its owner entry as read; `None`: an index ghost.
    entry: Option<Vec<u8>>,
    generation: Generation,
    parsed: Option<wire::ParsedMember>,
    /// The marker value read (or [`ANSWERED`]).
    marker: Option<String>,
    /// `(kind, dead entry JSON)` for a claim at the limit.
    limit: Option<(ReclaimAs, String)>,
}

/// The hash-tagged layout's second phase: steps 1 to 4 for the chosen
/// claims (their owner entries and members read).
pub(crate) async fn reclaim_chosen(
    (store, queue, q, now, chosen): (&RedisStore, &str, &QueueKeys, Millis, &[String]),
    owners: Vec<Option<Vec<u8>>>,
    members: Vec<Option<Vec<u8>>>,
) -> Result<[usize; 3], StoreError> {
    let config = &store.inner.config;
    let keys = store.keys();
    let mut items: Vec<Item> = chosen
        .iter()
        .zip(owners)
        .zip(members)
        .map(|((key, entry), member)| Item {
            skip: false,
            key: key.clone(),
            generation: Generation::from_claim_key(key),
            parsed: member.and_then(|m| wire::parse_member(&m).ok()),
            entry,
            marker: None,
            limit: None,
        })
        .collect();
    let candidates: Vec<Vec<String>> = items
        .iter()
        .map(|item| {
            request_keys::marker_candidates(store, queue, item.parsed.as_ref(), &item.generation)
        })
        .collect();
    let mut failed = read_markers(store, queue, &mut items, &candidates).await;
    failed = failed.or(push_limit_records(store, queue, now, &mut items).await);
    items.retain(|item| !item.skip);
    if items.is_empty() {
        return match failed {
            Some(err) => Err(err),
            None => Ok([0, 0, 0]),
        };
    }

    let mut call = Call::new(store, &store.scripts().reclaim);
    for key in q.all() {
        call.key(key);
    }
    call.key(keys.clock_side_for(&q.pending));
    let explicit = explicit_time_arg(store.explicit_now().is_some());
    call.arg(now.0)
        .arg(config.result_dedup_ttl_ms)
        .arg(store.ttl_slack())
        .arg(format!("t{explicit}"));
    for item in &items {
        let Some(entry) = &item.entry else {
            call.arg(item.key.as_str())
                .arg("")
                .arg(ReclaimAs::Ghost.tag());
            continue;
        };
        call.arg(item.key.as_str()).arg(entry.as_slice());
        match &item.limit {
            None => call.arg(ReclaimAs::Redeliver.tag()).arg("0"),
            Some((kind, dead)) => call.arg(kind.tag()).arg("0").arg(dead.as_str()),
        };
        call.arg(item.marker.as_deref().unwrap_or_default());
    }
    let reply: Vec<Value> = call.run(store, OP).await?;
    let counts: Vec<usize> = reply
        .iter()
        .take(3)
        .map(|v| redis::from_redis_value::<usize>(v.clone()).ok())
        .collect::<Option<_>>()
        .filter(|c: &Vec<usize>| c.len() == 3)
        .ok_or_else(|| bad_reply(OP, Effect::Write, format!("{reply:?}")))?;
    let ended: Vec<String> = reply[3..]
        .iter()
        .filter_map(|v| redis::from_redis_value::<String>(v.clone()).ok())
        .collect();
    forget_ended(store, &items, &ended).await;
    Ok([counts[0], counts[1], counts[2]])
}

/// Step 1's marker reads, with the isolation of the module docs: on an
/// error, again per group of claims whose candidate markers lie in the
/// same slots (one by one when the error is permanent). Returns the first error.
async fn read_markers(
    store: &RedisStore,
    queue: &str,
    items: &mut [Item],
    candidates: &[Vec<String>],
) -> Option<StoreError> {
    let err = match request_keys::markers(store, OP, candidates).await {
        Ok(values) => {
            for (item, value) in items.iter_mut().zip(values) {
                item.marker = value;
            }
            return None;
        }
        Err(err) => err,
    };
    let slots: Vec<Vec<u16>> = candidates
        .iter()
        .map(|c| c.iter().map(|k| hash_slot(k.as_bytes())).collect())
        .collect();
    for group in isolated(&slots, &err) {
        let asked: Vec<Vec<String>> = group.iter().map(|&i| candidates[i].clone()).collect();
        match request_keys::markers(store, OP, &asked).await {
            Ok(values) => {
                for (&i, value) in group.iter().zip(values) {
                    items[i].marker = value;
                }
            }
            Err(e) => skip(queue, items, &group, "reading its terminal marker", &e),
        }
    }
    Some(err)
}

/// The groups a failed call over `keys` (one entry per claim) is retried
/// in: claims with equal entries together after a transient error (the
/// same nodes fail the same way), each alone after a permanent one.
fn isolated<K: PartialEq>(keys: &[K], err: &StoreError) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in 0..keys.len() {
        match groups
            .iter_mut()
            .find(|g| err.is_transient() && keys[g[0]] == keys[i])
        {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

/// Leaves the claims `group` out of this pass, saying why.
fn skip(queue: &str, items: &mut [Item], group: &[usize], doing: &str, err: &StoreError) {
    for &i in group {
        let item = &mut items[i];
        item.skip = true;
        tracing::warn!(queue, id = %item.generation.id, error = %err,
            "reclaim left an expired claim for a later pass: {doing} failed");
    }
}

/// Step 2: decides each claim at the limit and pushes the `DELIVERY_LIMIT`
/// records of those that need one, per list and TTL (the routing's,
/// `StoreConfig::route`), with the isolation of the module docs. Returns
/// the first error.
async fn push_limit_records(
    store: &RedisStore,
    queue: &str,
    now: Millis,
    items: &mut [Item],
) -> Option<StoreError> {
    let config = &store.inner.config;
    let live = |m: &Option<String>| {
        m.as_deref()
            .is_some_and(|v| parse_marker(v).is_none_or(|(expiry, _)| expiry > now.0))
    };
    // (item index, (list, TTL), record) of the records to push.
    let mut pushes: Vec<(usize, (String, u64), Record)> = Vec::new();
    for (i, item) in items.iter_mut().enumerate() {
        if item.skip {
            continue;
        }
        let Some(owner) = item.entry.as_deref().and_then(parse_owner) else {
            continue;
        };
        let at_limit = config.max_deliveries > 0 && owner.redeliveries + 1 >= config.max_deliveries;
        if !at_limit || live(&item.marker) {
            continue;
        }
        let redeliveries = owner.redeliveries + 1;
        let g = &item.generation;
        tracing::warn!(queue, id = %g.id, redeliveries, "delivery limit reached: dead-lettering");
        let route = config.route(queue, item.parsed.as_ref());
        if let Some(why) = store.list_refusal(queue, &route.list) {
            let reason = undeliverable_limit_reason(redeliveries, &why);
            item.limit = Some((ReclaimAs::Unusable, dead_json(&reason, now)));
            continue;
        }
        let record = delivery_limit_record(g, redeliveries, queue);
        let ttl = route.ttl_or_zero();
        pushes.push((i, (route.list, ttl), record));
    }
    let mut lists: Vec<&(String, u64)> = pushes.iter().map(|p| &p.1).collect();
    lists.sort_unstable();
    lists.dedup();
    let mut decided: Vec<(usize, Pushed)> = Vec::new();
    let (mut failed, mut skipped) = (None, Vec::new());
    for list in lists {
        let group: Vec<&(usize, (String, u64), Record)> =
            pushes.iter().filter(|p| p.1 == *list).collect();
        let digests: Vec<String> = group
            .iter()
            .map(|p| record_digest(p.2.as_bytes()))
            .collect();
        let batch: Vec<PushItem<'_>> = group
            .iter()
            .zip(&digests)
            .map(|(p, digest)| PushItem {
                generation: &items[p.0].generation,
                record: p.2.as_bytes(),
                digest,
                // The claim is dropped by this pass's script and the
                // member dead-lettered: no copy is left to answer, so the
                // marker lives the dedup TTL; a crash before the script
                // leaves the lapsed claim, which the next pass finds
                // answered by this marker.
                other_claim_deadline: 0,
            })
            .collect();
        let (name, ttl) = list;
        let err = match push_once(store, name, *ttl, &batch).await {
            Ok(answers) => {
                decided.extend(group.iter().map(|p| p.0).zip(answers));
                continue;
            }
            Err(err) => err,
        };
        // Transient: the list's node; the whole group waits. Permanent:
        // one by one, so only the claims it comes from wait.
        let mut left = Vec::new();
        if err.is_transient() || batch.len() == 1 {
            left.extend(group.iter().map(|p| p.0));
        } else {
            for (p, one) in group.iter().zip(&batch) {
                let alone = [PushItem { ..*one }];
                match push_once(store, name, *ttl, &alone).await {
                    Ok(answers) => decided.extend([p.0].into_iter().zip(answers)),
                    Err(e) => {
                        tracing::warn!(queue, list = %name, error = %e, "DELIVERY_LIMIT push failed");
                        left.push(p.0);
                    }
                }
            }
        }
        tracing::warn!(queue, list = %name, error = %err, claims = left.len(),
            "DELIVERY_LIMIT push failed: its claims are left for a later pass");
        skipped.extend(left);
        failed.get_or_insert(err);
    }
    for (i, pushed) in decided {
        let item = &mut items[i];
        let redeliveries = item
            .entry
            .as_deref()
            .and_then(parse_owner)
            .map_or(0, |e| e.redeliveries)
            + 1;
        match pushed {
            Pushed::Pushed | Pushed::OwnRecordLanded => {
                let reason = delivery_limit_reason(redeliveries);
                item.limit = Some((ReclaimAs::Pushed, dead_json(&reason, now)));
                // Our own marker: not "answered before" for the script.
                item.marker = None;
            }
            Pushed::Suppressed => item.marker = Some(ANSWERED.to_owned()),
            Pushed::Unusable(why) => {
                let reason = undeliverable_limit_reason(redeliveries, &why);
                item.limit = Some((ReclaimAs::Unusable, dead_json(&reason, now)));
            }
        }
    }
    for i in skipped {
        items[i].skip = true;
    }
    failed
}

/// Step 4: the payload key of each generation the script ended answered,
/// and (for those answered by a record pushed here) the producer keys
/// still holding its token; best effort.
async fn forget_ended(store: &RedisStore, items: &[Item], ended: &[String]) {
    let keys = store.keys();
    let mut targets: Vec<(String, String)> = Vec::new();
    for item in items.iter().filter(|i| ended.contains(&i.key)) {
        let g = &item.generation;
        if matches!(item.limit, Some((ReclaimAs::Pushed, _))) {
            targets.push((keys.active(&g.id), g.token.clone()));
            targets.push((keys.cancel(&g.id), g.token.clone()));
        }
        if let Some(payload_ref) = item.parsed.as_ref().and_then(|p| p.payload_ref.as_deref()) {
            targets.push((keys.payload(payload_ref), String::new()));
        }
    }
    request_keys::delete(store, OP, targets).await;
}
