//! The hot path: batched claim, renew and ack, one script call per batch.
//!
//! Each call is written as one `EVALSHA` command straight into redis-rs's
//! command buffer: keys and generation keys are formatted in place, members
//! and records copied once, so a batch of a hundred costs a handful of
//! allocations instead of several per item (see docs/PERFORMANCE.md). The
//! argument layouts are the scripts' headers (`lua/claim.lua`, `lua/ack.lua`,
//! `lua/renew.lua`).

use crate::conn::{Effect, bad_reply};
use crate::keys::GenerationKey;
use crate::reply::{bytes, int, parse_score};
use crate::store::{MAX_BATCH, RedisStore};
use claim_core::Op;
use claim_core::marker::record_digest;
use claim_core::store::{AckItem, AckOutcome, ClaimOutcome, ClaimRequest, RenewOutcome};
use claim_core::{Generation, Millis, OwnerToken, StoreError};
use redis::{Cmd, RedisWrite, Script, Value};

/// `EVALSHA <sha> <keys>`, ready for the keys and then the arguments.
fn evalsha(script: &Script, keys: usize, args: usize, bytes: usize) -> Cmd {
    let mut cmd = Cmd::with_capacity(3 + keys + args, 64 + bytes);
    cmd.arg("EVALSHA").arg(script.get_hash()).arg(keys);
    cmd
}

impl RedisStore {
    /// Claims in calls of [`MAX_BATCH`]. When a later call fails, the
    /// claims of the earlier ones are not orphaned: the batch is answered
    /// with them, the failed and later items as `NotPending` (they are still
    /// pending, or were released again if the failed call may have run).
    pub(crate) async fn claim_batch(
        &self,
        queue: &str,
        owner: &OwnerToken,
        items: &[ClaimRequest],
    ) -> Result<Vec<ClaimOutcome>, StoreError> {
        let mut out = Vec::with_capacity(items.len());
        for chunk in items.chunks(MAX_BATCH) {
            match self.claim_chunk(queue, owner, chunk).await {
                Ok(outcomes) => out.extend(outcomes),
                Err(e) if out.is_empty() => return Err(e),
                Err(e) => {
                    tracing::warn!(queue, error = %e, claimed = out.len(), "a later claim call failed; answering the earlier ones");
                    if e.may_have_happened() {
                        let generations: Vec<Generation> =
                            chunk.iter().map(|i| i.generation.clone()).collect();
                        if let Err(e) = self
                            .release_batch(Op::Release, queue, owner, &generations)
                            .await
                        {
                            tracing::warn!(queue, error = %e, "release after an unknown claim outcome failed; the claims lapse after their lease");
                        }
                    }
                    out.resize(items.len(), ClaimOutcome::NotPending);
                    return Ok(out);
                }
            }
        }
        Ok(out)
    }

    async fn claim_chunk(
        &self,
        queue: &str,
        owner: &OwnerToken,
        chunk: &[ClaimRequest],
    ) -> Result<Vec<ClaimOutcome>, StoreError> {
        const OP: Op = Op::Claim;
        let q = self.keys().queue(queue);
        let keys = self.keys();
        let ttl = self.inner.config.lease_ttl_ms;
        let time = self.time_arg();
        let n = chunk.len();
        let bytes: usize = chunk.iter().map(|i| i.member.len() + 160).sum();
        let script = &self.scripts().claim;
        let mut cmd = evalsha(script, 7 + 2 * n, 4 + 3 * n, bytes);
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
        for item in chunk {
            cmd.arg(item.member.as_bytes());
        }
        for item in chunk {
            cmd.write_arg_fmt(GenerationKey(&item.generation));
        }
        for item in chunk {
            cmd.arg(&item.generation.token);
        }
        let reply: Vec<Value> = self.conn().evalsha(OP, script, &cmd).await?;
        if reply.len() != 4 * n {
            return Err(bad_reply(
                OP,
                Effect::Write,
                format!("{} values for {n} items", reply.len()),
            ));
        }
        reply
            .chunks(4)
            .map(|v| claim_outcome(v).ok_or_else(|| bad_reply(OP, Effect::Write, format!("{v:?}"))))
            .collect()
    }

    pub(crate) async fn renew_batch(
        &self,
        queue: &str,
        owner: &OwnerToken,
        generations: &[Generation],
    ) -> Result<Vec<RenewOutcome>, StoreError> {
        const OP: Op = Op::Renew;
        let q = self.keys().queue(queue);
        let time = self.time_arg();
        let mut out = Vec::with_capacity(generations.len());
        for chunk in generations.chunks(MAX_BATCH) {
            let script = &self.scripts().renew;
            let mut cmd = evalsha(script, 2, 3 + chunk.len(), 48 * chunk.len());
            cmd.arg(&q.owners).arg(&q.index);
            cmd.arg(owner.as_str())
                .arg(&time)
                .arg(self.inner.config.lease_ttl_ms);
            for g in chunk {
                cmd.write_arg_fmt(GenerationKey(g));
            }
            let reply: Vec<i64> = self.conn().evalsha(OP, script, &cmd).await?;
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
        const OP: Op = Op::Ack;
        let q = self.keys().queue(queue);
        let keys = self.keys();
        let config = &self.inner.config;
        let time = self.time_arg();
        let mut out = Vec::with_capacity(items.len());
        for chunk in items.chunks(MAX_BATCH) {
            let n = chunk.len();
            let runs = runs(chunk);
            let bytes: usize = chunk
                .iter()
                .map(|i| i.record.len() + i.member.len() + 240)
                .sum();
            let script = &self.scripts().ack;
            let mut cmd = evalsha(
                script,
                7 + runs.len() + 3 * n,
                6 + 2 * runs.len() + 6 * n,
                bytes,
            );
            cmd.arg(&q.pending)
                .arg(&q.claimed)
                .arg(&q.owners)
                .arg(&q.index)
                .arg(&q.deliveries)
                .arg(&q.dead)
                .arg(keys.clock_side());
            for (list, _) in &runs {
                cmd.write_arg_fmt(format_args!("{}{list}", keys.prefix()));
            }
            for item in chunk {
                cmd.write_arg_fmt(keys.marker_key(&item.generation));
            }
            for item in chunk {
                let id = &item.generation.id;
                cmd.write_arg_fmt(keys.active_key(id));
                cmd.write_arg_fmt(keys.cancel_key(id));
            }
            cmd.arg(owner.as_str())
                .arg(&time)
                .arg(config.result_dedup_ttl_ms)
                .arg(self.ttl_slack())
                .arg(runs.len())
                .arg(keys.prefix().len());
            for (list, count) in &runs {
                let refusal = config.result_list_refusal(queue, list);
                cmd.arg(*count).arg(refusal.as_deref().unwrap_or(""));
            }
            for item in chunk {
                cmd.write_arg_fmt(GenerationKey(&item.generation));
            }
            for item in chunk {
                cmd.arg(&item.generation.token);
            }
            for item in chunk {
                cmd.arg(item.record.as_bytes());
            }
            for item in chunk {
                cmd.arg(item.member.as_bytes());
            }
            for item in chunk {
                // A score Redis cannot print back as a number (±inf) has no
                // deadline to keep the marker for: the dedup TTL alone does.
                let score = item.score.0;
                cmd.write_arg_fmt(if score.is_finite() { score } else { 0.0 });
            }
            for item in chunk {
                cmd.arg(record_digest(item.record.as_bytes()));
            }
            let reply: Vec<i64> = self.conn().evalsha(OP, script, &cmd).await?;
            if reply.len() != n {
                return Err(bad_reply(
                    OP,
                    Effect::Write,
                    format!("{} values for {n} items", reply.len()),
                ));
            }
            out.extend(reply.into_iter().map(|code| AckOutcome {
                pushed: code & 1 != 0,
                claim_dropped: code & 2 != 0,
                dead_lettered: code & 4 != 0,
                own_record_landed: code & 8 != 0,
            }));
        }
        Ok(out)
    }
}

/// Consecutive items with the same result list, as (list, item count):
/// ack.lua pushes each run with one LPUSH and takes each list key once.
fn runs(items: &[AckItem]) -> Vec<(&str, usize)> {
    let mut runs: Vec<(&str, usize)> = Vec::new();
    for item in items {
        match runs.last_mut() {
            Some((list, count)) if *list == item.result_list => *count += 1,
            _ => runs.push((&item.result_list, 1)),
        }
    }
    runs
}

/// One item of the claim script's reply: code, redeliveries, score, expiry.
fn claim_outcome(v: &[Value]) -> Option<ClaimOutcome> {
    let code = int(&v[0])?;
    Some(match code {
        0 => ClaimOutcome::NotPending,
        1 => ClaimOutcome::DuplicateDropped,
        4 => ClaimOutcome::DeadLettered,
        2 | 3 => ClaimOutcome::Claimed {
            cancelled: code == 3,
            redeliveries: u32::try_from(int(&v[1])?).ok()?,
            score: parse_score(bytes(&v[2])?)?,
            lease_expiry: Millis(u64::try_from(int(&v[3])?).ok()?),
        },
        _ => return None,
    })
}
