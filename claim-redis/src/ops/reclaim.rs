//! `reclaim_expired`: chooses expired claims in the model's order, then runs `lua/reclaim.lua`, one owner-checked call per batch.
//!
//! Phase one reads (the claims index; owner entries and members,
//! pipelined: a member gives the result list at the delivery limit and the
//! payload key); phase two runs `reclaim.lua`, which re-checks that each
//! claim is still the one read and still expired, and whether its
//! generation is answered. Every item names its member's
//! `internal.payload_ref`: the script deletes that payload key where the
//! generation ends answered and keeps it where the item is redelivered.
//! Before that, a cheap consistency check (ZCARD of the index against HLEN
//! of the claims) decides whether the index needs a repair scan.

use super::repair_index::repair_index;
use crate::codec::{ReclaimAs, dead_json, explicit_time_arg, parse_owner, score_arg};
use crate::conn::Effect;
use crate::keys::QueueKeys;
use crate::store::{MAX_BATCH, RedisStore};
use claim_core::Op;
use claim_core::marker::record_digest;
use claim_core::model::{
    delivery_limit_reason, delivery_limit_record, undeliverable_limit_reason, unusable_list_reason,
};
use claim_core::store::ReclaimReport;
use claim_core::{Generation, Millis, Score, StoreError, wire};

const OP: Op = Op::ReclaimExpired;

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
        let [redelivered, dead, ghosts] = if store.keys().tagged() {
            super::reclaim_tagged::reclaim_chosen(store, queue, &q, now, &chosen).await?
        } else {
            reclaim_chosen(store, queue, &q, now, &chosen).await?
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

/// Phase one's reads for `chosen` (one pipelined round trip): each
/// claim's owner entry and member. The member names the payload key the
/// script deletes if the generation turns out answered. It is read for
/// every item, not only for those whose marker looked live here: a stale
/// owner's ack landing between this read and the script makes the script
/// drop the claim as answered, and without the key its payload was left
/// behind (chaos seed 393283305 found one). In the hash-tagged layout
/// the two reads are one MULTI (both keys in the queue's slot, checked).
pub(super) async fn owners_and_members(
    store: &RedisStore,
    q: &QueueKeys,
    chosen: &[String],
) -> Result<(Vec<Option<Vec<u8>>>, Vec<Option<Vec<u8>>>), StoreError> {
    let mut reads = redis::pipe();
    reads
        .cmd("HMGET")
        .arg(&q.owners)
        .arg(chosen)
        .cmd("HMGET")
        .arg(&q.claimed)
        .arg(chosen);
    if store.keys().tagged() {
        reads.atomic();
        super::call::check_keys(store, OP, "MULTI of HMGETs", &[&q.owners, &q.claimed])?;
    }
    store.conn().query(OP, Effect::Read, &reads).await
}

async fn reclaim_chosen(
    store: &RedisStore,
    queue: &str,
    q: &QueueKeys,
    now: Millis,
    chosen: &[String],
) -> Result<[usize; 3], StoreError> {
    let config = &store.inner.config;
    let (owners, members) = owners_and_members(store, q, chosen).await?;
    let at_limit = |entry: Option<&[u8]>| {
        let parsed = entry.and_then(parse_owner);
        parsed.is_some_and(|e| {
            config.max_deliveries > 0 && e.redeliveries + 1 >= config.max_deliveries
        })
    };
    // Payload keys of every item whose member names one: KEYS after every
    // item's own keys, in item order, so the script's MGET never reads
    // them; the script deletes only those of generations that end answered.
    let mut payload_keys: Vec<String> = Vec::new();

    let dedup = config.result_dedup_ttl_ms;
    let mut call = super::call::Call::new(store, &store.scripts().reclaim);
    for key in q.all() {
        call.key(key);
    }
    call.key(store.keys().clock_side());
    call.arg(now.0)
        .arg(dedup)
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
        if !at_limit(Some(entry)) {
            call.key(store.keys().marker(&g));
            call.arg(key.as_str())
                .arg(entry.as_slice())
                .arg(ReclaimAs::Redeliver.tag())
                .arg(payload_flag);
            continue;
        }
        let redeliveries = parse_owner(entry).map_or(0, |e| e.redeliveries) + 1;
        let route = config.route(queue, parsed.as_ref());
        let list = route.list.as_str();
        tracing::warn!(queue, id = %g.id, redeliveries, "delivery limit reached: dead-lettering");
        if let Some(why) = store.list_refusal(queue, list) {
            call.key(store.keys().marker(&g));
            call.arg(key.as_str())
                .arg(entry.as_slice())
                .arg(ReclaimAs::Unusable.tag())
                .arg(payload_flag)
                .arg(dead_json(
                    &undeliverable_limit_reason(redeliveries, &why),
                    now,
                ));
            continue;
        }
        let holds = unusable_list_reason(list, "");
        let record = delivery_limit_record(&g, redeliveries, queue);
        call.key(store.keys().marker(&g))
            .key(store.keys().list(list))
            .key(store.keys().active(&g.id))
            .key(store.keys().cancel(&g.id));
        call.arg(key.as_str())
            .arg(entry.as_slice())
            .arg(ReclaimAs::Limit.tag())
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
        _ => Err(crate::conn::bad_reply(
            OP,
            Effect::Write,
            format!("{counts:?}"),
        )),
    }
}
