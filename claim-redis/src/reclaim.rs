//! Reclaim of expired claims: choose them in the model's order, then one owner-checked script per batch.
//!
//! Phase one reads (the claims index, owner entries, and for claims at the
//! delivery limit their members, to find the result list); phase two runs
//! `reclaim.lua`, which re-checks that each claim is still the one read and
//! still expired. Before that, a cheap consistency check (ZCARD of the
//! index against HLEN of the claims) decides whether the index needs a
//! repair scan.

use crate::conn::Effect;
use crate::keys::QueueKeys;
use crate::reply::{dead_json, parse_owner, score_arg};
use crate::store::{MAX_BATCH, RedisStore};
use claim_core::Op;
use claim_core::marker::record_digest;
use claim_core::model::{
    delivery_limit_reason, delivery_limit_record, undeliverable_limit_reason, unusable_list_reason,
};
use claim_core::store::ReclaimReport;
use claim_core::{Generation, Millis, Score, StoreError, wire};
use std::collections::HashSet;

const OP: Op = Op::ReclaimExpired;

impl RedisStore {
    pub(crate) async fn reclaim(
        &self,
        queue: &str,
        limit: usize,
    ) -> Result<ReclaimReport, StoreError> {
        let now = self.now_ms(OP).await?;
        let q = self.keys().queue(queue);
        let mut report = ReclaimReport {
            ghosts_repaired: self.repair_index(&q).await?,
            ..ReclaimReport::default()
        };
        let until = score_arg(now.as_score());
        if limit == 0 {
            report.more = !self.expired(&q, &until, 1).await?.is_empty();
            return Ok(report);
        }
        let mut remaining = limit;
        while remaining > 0 {
            let want = remaining.min(MAX_BATCH);
            let (chosen, more) = self.choose(&q, &until, want).await?;
            if chosen.is_empty() {
                break;
            }
            let [redelivered, dead, ghosts] = self.reclaim_chosen(queue, &q, now, &chosen).await?;
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
        &self,
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
        self.conn().query(OP, Effect::Read, &cmd).await
    }

    /// The first `want` expired claims in the model's order (lease expiry,
    /// then generation by id and token), and whether more are expired. The
    /// index orders ties by key bytes instead, so a tie group crossing the
    /// cut is read whole and sorted here.
    async fn choose(
        &self,
        q: &QueueKeys,
        until: &str,
        want: usize,
    ) -> Result<(Vec<String>, bool), StoreError> {
        let mut found = self.expired(q, until, want + 1).await?;
        let more = found.len() > want;
        if more && found[want].1 == found[want - 1].1 {
            let tie = found[want].1;
            found.retain(|(_, s)| *s < tie);
            let group = redis::cmd("ZRANGEBYSCORE")
                .arg(&q.index)
                .arg(score_arg(Score(tie)))
                .arg(score_arg(Score(tie)))
                .to_owned();
            let group: Vec<String> = self.conn().query(OP, Effect::Read, &group).await?;
            found.extend(group.into_iter().map(|g| (g, tie)));
        }
        let mut keyed: Vec<(Millis, Generation, String)> = found
            .into_iter()
            .map(|(key, s)| {
                let g =
                    Generation::from_key(&key).unwrap_or_else(|| Generation::new(key.clone(), ""));
                (Score(s).as_millis(), g, key)
            })
            .collect();
        keyed.sort();
        keyed.truncate(want);
        Ok((keyed.into_iter().map(|(_, _, key)| key).collect(), more))
    }

    async fn reclaim_chosen(
        &self,
        queue: &str,
        q: &QueueKeys,
        now: Millis,
        chosen: &[String],
    ) -> Result<[usize; 3], StoreError> {
        let config = &self.inner.config;
        let owners: Vec<Option<Vec<u8>>> = self
            .conn()
            .query(
                OP,
                Effect::Read,
                redis::cmd("HMGET").arg(&q.owners).arg(chosen),
            )
            .await?;
        let at_limit = |entry: Option<&[u8]>| {
            let parsed = entry.and_then(parse_owner);
            parsed.is_some_and(|e| {
                config.max_deliveries > 0 && e.redeliveries + 1 >= config.max_deliveries
            })
        };
        let limit_keys: Vec<&String> = chosen
            .iter()
            .zip(&owners)
            .filter(|(_, o)| at_limit(o.as_deref()))
            .map(|(k, _)| k)
            .collect();
        let mut members: Vec<Option<Vec<u8>>> = Vec::new();
        if !limit_keys.is_empty() {
            let cmd = redis::cmd("HMGET")
                .arg(&q.claimed)
                .arg(&limit_keys)
                .to_owned();
            members = self.conn().query(OP, Effect::Read, &cmd).await?;
        }
        let mut members = members.into_iter();

        let dedup = config.result_dedup_ttl_ms;
        let mut call = self.scripts().reclaim.prepare_invoke();
        call.key(&q.pending)
            .key(&q.claimed)
            .key(&q.owners)
            .key(&q.index)
            .key(&q.deliveries)
            .key(&q.dead)
            .key(self.keys().clock_side());
        call.arg(now.0)
            .arg(dedup)
            .arg(self.ttl_slack())
            .arg(if self.explicit_now().is_some() {
                "1"
            } else {
                "0"
            });
        for (key, entry) in chosen.iter().zip(&owners) {
            let Some(entry) = entry else {
                call.arg(key.as_str()).arg("").arg("g");
                continue;
            };
            let g = Generation::from_key(key).unwrap_or_else(|| Generation::new(key.clone(), ""));
            if !at_limit(Some(entry)) {
                call.key(self.keys().marker(&g));
                call.arg(key.as_str()).arg(entry.as_slice()).arg("r");
                continue;
            }
            let redeliveries = parse_owner(entry).map_or(0, |e| e.redeliveries) + 1;
            let member = members.next().flatten();
            let parsed = member.as_deref().and_then(|m| wire::parse_member(m).ok());
            let list = config.result_list_for(
                queue,
                parsed.as_ref().and_then(|p| p.result_queue_name.as_deref()),
            );
            tracing::warn!(queue, id = %g.id, redeliveries, "delivery limit reached: dead-lettering");
            if let Some(why) = config.result_list_refusal(queue, &list) {
                call.key(self.keys().marker(&g));
                call.arg(key.as_str())
                    .arg(entry.as_slice())
                    .arg("u")
                    .arg(dead_json(
                        &undeliverable_limit_reason(redeliveries, &why),
                        now,
                    ));
                continue;
            }
            let holds = unusable_list_reason(&list, "");
            let record = delivery_limit_record(&g.id, redeliveries, queue);
            call.key(self.keys().marker(&g))
                .key(self.keys().list(&list))
                .key(self.keys().active(&g.id))
                .key(self.keys().cancel(&g.id));
            call.arg(key.as_str())
                .arg(entry.as_slice())
                .arg("l")
                .arg(&g.token)
                .arg(record.as_bytes())
                .arg(dead_json(&delivery_limit_reason(redeliveries), now))
                .arg(undeliverable_limit_reason(redeliveries, &holds))
                .arg(record_digest(record.as_bytes()));
        }
        let counts: Vec<usize> = self.conn().script(OP, &call).await?;
        match counts[..] {
            [r, d, g] => Ok([r, d, g]),
            _ => Err(crate::conn::bad_reply(
                OP,
                Effect::Write,
                format!("{counts:?}"),
            )),
        }
    }

    /// Repairs index ghosts when the index and the claims disagree in size.
    async fn repair_index(&self, q: &QueueKeys) -> Result<usize, StoreError> {
        let sizes = redis::pipe()
            .atomic()
            .zcard(&q.index)
            .hlen(&q.owners)
            .hlen(&q.claimed)
            .to_owned();
        let (indexed, owned, claimed): (usize, usize, usize) =
            self.conn().pipe(OP, Effect::Read, &sizes).await?;
        if indexed == owned && owned == claimed {
            return Ok(0);
        }
        let scan = redis::pipe()
            .atomic()
            .zrange(&q.index, 0, -1)
            .hkeys(&q.owners)
            .hkeys(&q.claimed)
            .to_owned();
        let (index, owners, members): (Vec<String>, Vec<String>, Vec<String>) =
            self.conn().pipe(OP, Effect::Read, &scan).await?;
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
            let mut call = self.scripts().repair_index.prepare_invoke();
            call.key(&q.owners).key(&q.index);
            call.arg(self.time_arg())
                .arg(self.inner.config.lease_ttl_ms)
                .arg(if dropping { chunk.len() } else { 0 });
            for key in chunk {
                call.arg(key.as_str());
            }
            let n: usize = self.conn().script(OP, &call).await?;
            repaired += n;
        }
        if repaired > 0 {
            tracing::warn!(index = %q.index, repaired, "repaired claims index ghosts");
        }
        Ok(repaired)
    }
}
