//! The leases a claim holds: `renew` runs `lua/renew.lua`, one call per [`MAX_BATCH`] generations; `reclaim_expired` chooses expired claims in the model's order and runs `lua/reclaim.lua` on them (the hash-tagged layout's second phase: `leases_cluster`), after `lua/repair_index.lua` when the index disagrees.
//!
//! Reclaim, phase one reads (the claims index; owner entries and members,
//! pipelined: a member gives the result list at the delivery limit and the
//! payload key); phase two runs `reclaim.lua`, which re-checks that each
//! claim is still the one read and still expired, and whether its
//! generation is answered. Every item names its member's
//! `internal.payload_ref`: the script deletes that payload key where the
//! generation ends answered and keeps it where the item is redelivered.
//! Before that, a cheap consistency check (ZCARD of the index against HLEN
//! of the claims) decides whether the index needs a repair scan.

use super::call::{self, Call, check_keys, evalsha};
use super::leases_cluster;
use super::stats::sizes;
use crate::codec::{
    ReclaimAs, dead_json, explicit_time_arg, parse_owner, renew_outcome, score_arg,
};
use crate::conn::{Effect, bad_reply};
use crate::keys::{KeyLayout, QueueKeys};
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::marker::record_digest;
use claim_core::model::{
    delivery_limit_reason, delivery_limit_record, undeliverable_limit_reason, unusable_list_reason,
};
use claim_core::store::{ReclaimReport, RenewOutcome};
use claim_core::{ClaimKey, Generation, Millis, Op, OwnerToken, Score, StoreError, wire};
use redis::RedisWrite;
use std::collections::HashSet;

/// Extends the leases `owner` holds; the layout is `lua/renew.lua`'s header.
pub(crate) async fn renew(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    generations: &[Generation],
) -> Result<Vec<RenewOutcome>, StoreError> {
    let q = store.keys().queue(queue);
    let time = store.time_arg();
    let mut out = Vec::with_capacity(generations.len());
    for chunk in generations.chunks(MAX_BATCH) {
        let script = &store.scripts().renew;
        let mut cmd = evalsha(script, 3, 3 + chunk.len(), 48 * chunk.len());
        cmd.arg(&q.owners).arg(&q.index).arg(&q.claimed);
        cmd.arg(owner.as_str())
            .arg(&time)
            .arg(store.inner.config.lease_ttl_ms);
        for g in chunk {
            cmd.write_arg_fmt(ClaimKey(g));
        }
        let reply = call::run_per_item(store, Op::Renew, script, &cmd, chunk.len()).await?;
        out.extend(reply.into_iter().map(renew_outcome));
    }
    Ok(out)
}

const OP: Op = Op::ReclaimExpired;

/// Reclaims up to `limit` expired claims of `queue`, in passes of
/// [`MAX_BATCH`] chosen in the model's order, each pass's second phase run
/// by the layout's `reclaim_chosen`; repairs the index first when it disagrees.
pub(crate) async fn reclaim_expired(
    store: &RedisStore,
    queue: &str,
    limit: usize,
) -> Result<ReclaimReport, StoreError> {
    let now = store.now_ms(OP).await?;
    let q = store.keys().queue(queue);
    let mut report = ReclaimReport {
        ghosts_repaired: repair_index(store, &q).await?,
        ..ReclaimReport::default()
    };
    let until = score_arg(now.as_score());
    if limit == 0 {
        report.more = !expired(store, &q, &until, 1).await?.is_empty();
        return Ok(report);
    }
    let mut remaining = limit;
    while remaining > 0 {
        let want = remaining.min(MAX_BATCH);
        let (chosen, more) = choose(store, &q, &until, want).await?;
        if chosen.is_empty() {
            break;
        }
        // Phase one's reads: each claim's owner entry and member (`None`
        // where the claim is gone), one round trip; hash-tagged, both keys
        // lie in the queue's slot (checked): one MULTI. The member names the
        // payload key the script deletes if the generation turns out
        // answered. It is read for every item, not only for those whose
        // marker looked live here: a stale owner's ack landing between this
        // read and the script makes the script drop the claim as answered,
        // and without the key its payload was left behind (chaos seed
        // 393283305 found one).
        let mut reads = redis::pipe();
        reads.cmd("HMGET").arg(&q.owners).arg(&chosen);
        reads.cmd("HMGET").arg(&q.claimed).arg(&chosen);
        let tagged = store.layout() == KeyLayout::HashTagged;
        if tagged {
            reads.atomic();
            check_keys(store, OP, "MULTI of HMGETs", &[&q.owners, &q.claimed])?;
        }
        let (owners, members) = store.conn().query(OP, Effect::Read, &reads).await?;
        let pass = (store, queue, &q, now, chosen.as_slice());
        let [redelivered, dead, ghosts] = match tagged {
            false => reclaim_chosen(pass, owners, members).await?,
            true => leases_cluster::reclaim_chosen(pass, owners, members).await?,
        };
        report.redelivered += redelivered;
        report.dead_lettered += dead;
        report.ghosts_repaired += ghosts;
        remaining -= chosen.len();
        report.more = more && remaining == 0;
        if !more {
            break;
        }
    }
    if report.redelivered + report.dead_lettered > 0 {
        tracing::info!(
            queue,
            redelivered = report.redelivered,
            dead_lettered = report.dead_lettered,
            "reclaimed expired claims"
        );
    }
    Ok(report)
}

/// Up to `count` index entries expired by `until`, in index order.
async fn expired(
    store: &RedisStore,
    q: &QueueKeys,
    until: &str,
    count: usize,
) -> Result<Vec<(String, f64)>, StoreError> {
    let cmd = redis::cmd("ZRANGEBYSCORE")
        .arg(&q.index)
        .arg("-inf")
        .arg(until)
        .arg("WITHSCORES")
        .arg("LIMIT")
        .arg(0)
        .arg(count)
        .to_owned();
    store.conn().query(OP, Effect::Read, &cmd).await
}

/// The first `want` expired claims in the model's order (lease expiry,
/// then generation by id and token), and whether more are expired. The
/// index orders ties by key bytes instead, so a tie group crossing the
/// cut is read whole and sorted here.
async fn choose(
    store: &RedisStore,
    q: &QueueKeys,
    until: &str,
    want: usize,
) -> Result<(Vec<String>, bool), StoreError> {
    let mut found = expired(store, q, until, want + 1).await?;
    let more = found.len() > want;
    if more && found[want].1 == found[want - 1].1 {
        let tie = found[want].1;
        found.retain(|(_, s)| *s < tie);
        let group = redis::cmd("ZRANGEBYSCORE")
            .arg(&q.index)
            .arg(score_arg(Score(tie)))
            .arg(score_arg(Score(tie)))
            .to_owned();
        let group: Vec<String> = store.conn().query(OP, Effect::Read, &group).await?;
        found.extend(group.into_iter().map(|g| (g, tie)));
    }
    let mut keyed: Vec<(Millis, Generation, String)> = found
        .into_iter()
        .map(|(key, s)| {
            let g = Generation::from_claim_key(&key);
            (Score(s).as_millis(), g, key)
        })
        .collect();
    keyed.sort();
    keyed.truncate(want);
    Ok((keyed.into_iter().map(|(_, _, key)| key).collect(), more))
}

/// Phase two in the plain layout: `reclaim.lua` on one pass's chosen
/// claims (their owner entries and members read), with every key each
/// item touches.
async fn reclaim_chosen(
    (store, queue, q, now, chosen): (&RedisStore, &str, &QueueKeys, Millis, &[String]),
    owners: Vec<Option<Vec<u8>>>,
    members: Vec<Option<Vec<u8>>>,
) -> Result<[usize; 3], StoreError> {
    let config = &store.inner.config;
    // Payload keys of every item whose member names one: KEYS after every
    // item's own keys, in item order, so the script's MGET never reads
    // them; the script deletes only those of generations that end answered.
    let mut payload_keys: Vec<String> = Vec::new();
    let mut call = Call::new(store, &store.scripts().reclaim);
    for key in q.all() {
        call.key(key);
    }
    call.key(store.keys().clock_side());
    call.arg(now.0)
        .arg(config.result_dedup_ttl_ms)
        .arg(store.ttl_slack())
        .arg(explicit_time_arg(store.explicit_now().is_some()));
    for ((key, entry), member) in chosen.iter().zip(&owners).zip(members) {
        let Some(entry) = entry else {
            call.arg(key.as_str()).arg("").arg(ReclaimAs::Ghost.tag());
            continue;
        };
        let g = Generation::from_claim_key(key);
        let parsed = member.as_deref().and_then(|m| wire::parse_member(m).ok());
        let payload = parsed.as_ref().and_then(|p| p.payload_ref.as_deref());
        if let Some(payload_ref) = payload {
            payload_keys.push(store.keys().payload(payload_ref));
        }
        let payload_flag = if payload.is_some() { "1" } else { "0" };
        let owned = parse_owner(entry);
        let redeliveries = owned.as_ref().map_or(0, |e| e.redeliveries) + 1;
        let limit = config.max_deliveries;
        call.key(store.keys().marker(&g));
        call.arg(key.as_str()).arg(entry.as_slice());
        if owned.is_none() || limit == 0 || redeliveries < limit {
            call.arg(ReclaimAs::Redeliver.tag()).arg(payload_flag);
            continue;
        }
        let route = config.route(queue, parsed.as_ref());
        let list = route.list.as_str();
        tracing::warn!(queue, id = %g.id, redeliveries, "delivery limit reached: dead-lettering");
        if let Some(why) = store.list_refusal(queue, list) {
            let reason = undeliverable_limit_reason(redeliveries, &why);
            call.arg(ReclaimAs::Unusable.tag())
                .arg(payload_flag)
                .arg(dead_json(&reason, now));
            continue;
        }
        let holds = unusable_list_reason(list, "");
        let record = delivery_limit_record(&g, redeliveries, queue);
        call.key(store.keys().list(list))
            .key(store.keys().active(&g.id))
            .key(store.keys().cancel(&g.id));
        call.arg(ReclaimAs::Limit.tag())
            .arg(payload_flag)
            .arg(&g.token)
            .arg(record.as_bytes())
            .arg(dead_json(&delivery_limit_reason(redeliveries), now))
            .arg(undeliverable_limit_reason(redeliveries, &holds))
            .arg(record_digest(record.as_bytes()))
            .arg(route.ttl_or_zero());
    }
    for key in &payload_keys {
        call.key(key);
    }
    let counts: Vec<usize> = call.run(store, OP).await?;
    match counts[..] {
        [r, d, g] => Ok([r, d, g]),
        _ => Err(bad_reply(OP, Effect::Write, format!("{counts:?}"))),
    }
}

/// Part of `reclaim_expired`: runs `lua/repair_index.lua` (index ghosts
/// repaired) when the index and the claims disagree in size.
pub(crate) async fn repair_index(store: &RedisStore, q: &QueueKeys) -> Result<usize, StoreError> {
    let (indexed, owned, claimed) = sizes(store, OP, &q.index, [&q.owners, &q.claimed]).await?;
    if indexed == owned && owned == claimed {
        return Ok(0);
    }
    check_keys(
        store,
        OP,
        "MULTI of ZRANGE and HKEYS",
        &[&q.index, &q.owners, &q.claimed],
    )?;
    let scan = redis::pipe()
        .atomic()
        .zrange(&q.index, 0, -1)
        .hkeys(&q.owners)
        .hkeys(&q.claimed)
        .to_owned();
    let (index, owners, members): (Vec<String>, Vec<String>, Vec<String>) =
        store.conn().query(OP, Effect::Read, &scan).await?;
    let (index, owners, members): (HashSet<_>, HashSet<_>, HashSet<_>) = (
        index.into_iter().collect(),
        owners.into_iter().collect(),
        members.into_iter().collect(),
    );
    let orphans = members.difference(&owners).count();
    if orphans > 0 {
        tracing::warn!(claimed = %q.claimed, orphans, "claimed members without an owner entry: left in place for an operator");
    }
    let drop: Vec<&String> = index.difference(&owners).collect();
    let add: Vec<&String> = owners.difference(&index).collect();
    let mut repaired = 0;
    let drops = drop.chunks(MAX_BATCH).map(|c| (c, true));
    for (chunk, dropping) in drops.chain(add.chunks(MAX_BATCH).map(|c| (c, false))) {
        let mut call = Call::new(store, &store.scripts().repair_index);
        call.key(&q.owners).key(&q.index).key(&q.claimed);
        call.arg(store.time_arg())
            .arg(store.inner.config.lease_ttl_ms)
            .arg(if dropping { chunk.len() } else { 0 });
        for key in chunk {
            call.arg(key.as_str());
        }
        let n: usize = call.run(store, OP).await?;
        repaired += n;
    }
    if repaired > 0 {
        tracing::warn!(index = %q.index, repaired, "repaired claims index ghosts");
    }
    Ok(repaired)
}
