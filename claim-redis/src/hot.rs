//! The hot path: batched claim, renew and ack, one script call per batch.

use crate::conn::{Effect, bad_reply};
use crate::reply::{bytes, int, parse_score};
use crate::store::{MAX_BATCH, RedisStore};
use claim_core::store::{AckItem, AckOutcome, ClaimOutcome, ClaimRequest, RenewOutcome};
use claim_core::{Generation, Millis, OwnerToken, StoreError};
use redis::Value;

impl RedisStore {
    pub(crate) async fn claim_batch(
        &self,
        queue: &str,
        owner: &OwnerToken,
        items: &[ClaimRequest],
    ) -> Result<Vec<ClaimOutcome>, StoreError> {
        const OP: &str = "claim";
        let q = self.keys().queue(queue);
        let ttl = self.inner.config.lease_ttl_ms;
        let mut out = Vec::with_capacity(items.len());
        for chunk in items.chunks(MAX_BATCH) {
            let mut call = self.scripts().claim.prepare_invoke();
            call.key(&q.pending)
                .key(&q.claimed)
                .key(&q.owners)
                .key(&q.index)
                .key(&q.deliveries)
                .key(self.keys().clock_side());
            for item in chunk {
                call.key(self.keys().marker(&item.generation))
                    .key(self.keys().cancel(&item.generation.id));
            }
            call.arg(owner.as_str()).arg(self.time_arg()).arg(ttl);
            for item in chunk {
                call.arg(item.member.as_bytes())
                    .arg(item.generation.key())
                    .arg(&item.generation.token);
            }
            let reply: Vec<Value> = self.conn().script(OP, &call).await?;
            if reply.len() != 4 * chunk.len() {
                return Err(bad_reply(
                    OP,
                    Effect::Write,
                    format!("{} values for {} items", reply.len(), chunk.len()),
                ));
            }
            for v in reply.chunks(4) {
                out.push(
                    claim_outcome(v)
                        .ok_or_else(|| bad_reply(OP, Effect::Write, format!("{v:?}")))?,
                );
            }
        }
        Ok(out)
    }

    pub(crate) async fn renew_batch(
        &self,
        queue: &str,
        owner: &OwnerToken,
        generations: &[Generation],
    ) -> Result<Vec<RenewOutcome>, StoreError> {
        const OP: &str = "renew";
        let q = self.keys().queue(queue);
        let mut out = Vec::with_capacity(generations.len());
        for chunk in generations.chunks(MAX_BATCH) {
            let mut call = self.scripts().renew.prepare_invoke();
            call.key(&q.owners).key(&q.index);
            call.arg(owner.as_str())
                .arg(self.time_arg())
                .arg(self.inner.config.lease_ttl_ms);
            for g in chunk {
                call.arg(g.key());
            }
            let reply: Vec<i64> = self.conn().script(OP, &call).await?;
            if reply.len() != chunk.len() {
                return Err(bad_reply(
                    OP,
                    Effect::Write,
                    format!("{} values for {} items", reply.len(), chunk.len()),
                ));
            }
            out.extend(reply.into_iter().map(|expiry| match u64::try_from(expiry) {
                Ok(ms) => RenewOutcome::Renewed {
                    lease_expiry: Millis(ms),
                },
                Err(_) => RenewOutcome::Lost,
            }));
        }
        Ok(out)
    }

    pub(crate) async fn ack_batch(
        &self,
        queue: &str,
        owner: &OwnerToken,
        items: &[AckItem],
    ) -> Result<Vec<AckOutcome>, StoreError> {
        const OP: &str = "ack";
        let q = self.keys().queue(queue);
        let dedup = self.inner.config.result_dedup_ttl_ms;
        let mut out = Vec::with_capacity(items.len());
        for chunk in items.chunks(MAX_BATCH) {
            let mut call = self.scripts().ack.prepare_invoke();
            call.key(&q.claimed)
                .key(&q.owners)
                .key(&q.index)
                .key(self.keys().clock_side());
            for item in chunk {
                let g = &item.generation;
                call.key(self.keys().marker(g))
                    .key(self.keys().list(&item.result_list))
                    .key(self.keys().active(&g.id))
                    .key(self.keys().cancel(&g.id));
            }
            call.arg(owner.as_str())
                .arg(self.time_arg())
                .arg(dedup)
                .arg(self.real_ttl(dedup));
            for item in chunk {
                call.arg(item.generation.key())
                    .arg(&item.generation.token)
                    .arg(item.record.as_bytes());
            }
            let reply: Vec<i64> = self.conn().script(OP, &call).await?;
            if reply.len() != chunk.len() {
                return Err(bad_reply(
                    OP,
                    Effect::Write,
                    format!("{} values for {} items", reply.len(), chunk.len()),
                ));
            }
            out.extend(reply.into_iter().map(|code| AckOutcome {
                pushed: code & 1 != 0,
                claim_dropped: code & 2 != 0,
            }));
        }
        Ok(out)
    }
}

/// One item of the claim script's reply: code, redeliveries, score, expiry.
fn claim_outcome(v: &[Value]) -> Option<ClaimOutcome> {
    let code = int(&v[0])?;
    Some(match code {
        0 => ClaimOutcome::NotPending,
        1 => ClaimOutcome::DuplicateDropped,
        2 | 3 => ClaimOutcome::Claimed {
            cancelled: code == 3,
            redeliveries: u32::try_from(int(&v[1])?).ok()?,
            score: parse_score(bytes(&v[2])?)?,
            lease_expiry: Millis(u64::try_from(int(&v[3])?).ok()?),
        },
        _ => return None,
    })
}
