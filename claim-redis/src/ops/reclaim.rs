//! `reclaim_expired`: chooses expired claims in the model's order (`reclaim_passes`), then runs `lua/reclaim.lua`, one owner-checked call per batch; the hash-tagged layout's second phase: `cluster::reclaim`.
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

use super::call::Call;
use super::cluster;
use super::reclaim_passes::{
    OwnersAndMembers, Pass, PassCounts, ReclaimChosen, owner_and_member_reads, reclaim_in_passes,
};
use crate::codec::{ReclaimAs, dead_json, explicit_time_arg, parse_owner};
use crate::conn::Effect;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::Op;
use claim_core::marker::record_digest;
use claim_core::model::{
    delivery_limit_reason, delivery_limit_record, undeliverable_limit_reason, unusable_list_reason,
};
use claim_core::store::ReclaimReport;
use claim_core::{Generation, StoreError, wire};

const OP: Op = Op::ReclaimExpired;

pub(crate) async fn reclaim_expired(
    store: &RedisStore,
    queue: &str,
    limit: usize,
) -> Result<ReclaimReport, StoreError> {
    match store.layout() {
        KeyLayout::Plain => reclaim_in_passes::<Plain>(store, queue, limit).await,
        KeyLayout::HashTagged => {
            reclaim_in_passes::<cluster::reclaim::HashTagged>(store, queue, limit).await
        }
    }
}

/// The plain layout's second phase.
struct Plain;

impl ReclaimChosen for Plain {
    /// Phase two: `reclaim.lua` on the chosen claims, with every key each
    /// item touches.
    async fn reclaim_chosen((store, queue, q, now, chosen): Pass<'_>) -> PassCounts {
        let config = &store.inner.config;
        let reads = owner_and_member_reads(q, chosen);
        let (owners, members): OwnersAndMembers =
            store.conn().query(OP, Effect::Read, &reads).await?;
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
        let mut call = Call::new(store, &store.scripts().reclaim);
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
}
