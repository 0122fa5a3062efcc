//! Return paths other than reclaim: release and sweep, retry parking and promotion, dead letters.

use crate::conn::{Effect, bad_reply};
use crate::reply::{dead_json, score_arg};
use crate::store::{MAX_BATCH, RedisStore};
use claim_core::Op;
use claim_core::store::ParkItem;
use claim_core::{Generation, Member, OwnerToken, Score, StoreError, wire};

impl RedisStore {
    /// Release and sweep are one script: neither counts as a delivery.
    pub(crate) async fn release_batch(
        &self,
        op: Op,
        queue: &str,
        owner: &OwnerToken,
        generations: &[Generation],
    ) -> Result<Vec<bool>, StoreError> {
        let q = self.keys().queue(queue);
        let mut out = Vec::with_capacity(generations.len());
        for chunk in generations.chunks(MAX_BATCH) {
            let mut call = self.scripts().release.prepare_invoke();
            call.key(&q.pending)
                .key(&q.claimed)
                .key(&q.owners)
                .key(&q.index)
                .key(&q.deliveries);
            call.arg(owner.as_str());
            for g in chunk {
                call.arg(g.key());
            }
            let reply: Vec<i64> = self.conn().script(op, &call).await?;
            if reply.len() != chunk.len() {
                return Err(bad_reply(
                    op,
                    Effect::Write,
                    format!("{} values for {} items", reply.len(), chunk.len()),
                ));
            }
            out.extend(reply.into_iter().map(|v| v == 1));
        }
        Ok(out)
    }

    pub(crate) async fn park_batch(
        &self,
        queue: &str,
        owner: &OwnerToken,
        items: &[ParkItem],
    ) -> Result<Vec<bool>, StoreError> {
        const OP: Op = Op::ParkRetry;
        let q = self.keys().queue(queue);
        let mut out = Vec::with_capacity(items.len());
        for chunk in items.chunks(MAX_BATCH) {
            let mut call = self.scripts().park_retry.prepare_invoke();
            call.key(&q.claimed)
                .key(&q.owners)
                .key(&q.index)
                .key(&q.deliveries)
                .key(self.keys().retry());
            call.arg(owner.as_str());
            for item in chunk {
                call.arg(item.generation.key())
                    .arg(item.member.as_bytes())
                    .arg(score_arg(item.due.as_score()));
            }
            let reply: Vec<i64> = self.conn().script(OP, &call).await?;
            if reply.len() != chunk.len() {
                return Err(bad_reply(
                    OP,
                    Effect::Write,
                    format!("{} values for {} items", reply.len(), chunk.len()),
                ));
            }
            out.extend(reply.into_iter().map(|v| v == 1));
        }
        Ok(out)
    }

    /// Two phases, since each member names its destination queue: read the
    /// due entries, parse them here, then move them in one script that
    /// re-checks each is still parked and due.
    pub(crate) async fn promote(&self, limit: usize) -> Result<usize, StoreError> {
        const OP: Op = Op::PromoteDue;
        let now = self.now_ms(OP).await?;
        let due_by = score_arg(now.as_score());
        let default_queue = &self.inner.config.default_queue;
        let fallback = self.keys().queue(default_queue).dead;
        let mut moved = 0;
        let mut remaining = limit;
        while remaining > 0 {
            let want = remaining.min(MAX_BATCH);
            let read = redis::cmd("ZRANGEBYSCORE")
                .arg(self.keys().retry())
                .arg("-inf")
                .arg(&due_by)
                .arg("LIMIT")
                .arg(0)
                .arg(want)
                .to_owned();
            let due: Vec<Vec<u8>> = self.conn().query(OP, Effect::Read, &read).await?;
            if due.is_empty() {
                break;
            }
            let mut call = self.scripts().promote.prepare_invoke();
            call.key(self.keys().retry()).key(&fallback);
            call.arg(&due_by).arg(now.0).arg(self.keys().prefix().len());
            for member in &due {
                let refusal = match wire::parse_member(member) {
                    Ok(p) => {
                        let queue = p.request_queue_name.as_deref().unwrap_or(default_queue);
                        match self.inner.config.retry_destination_refusal(queue) {
                            None => {
                                let g = Generation::new(p.id, p.token);
                                let dest = self.keys().queue(queue);
                                call.key(dest.pending)
                                    .key(self.keys().marker(&g))
                                    .key(dest.deliveries);
                                call.arg(member.as_slice())
                                    .arg("p")
                                    .arg(score_arg(Score(p.deadline as f64)))
                                    .arg(g.key());
                                continue;
                            }
                            Some(why) => why,
                        }
                    }
                    // The parse error may quote member bytes: only the dead entry keeps it.
                    Err(e) => format!("retry entry unparsable: {e}"),
                };
                tracing::warn!(dead = %fallback, "retry entry cannot be promoted: moving it to the dead set");
                call.key(&fallback).key(&fallback).key(&fallback);
                call.arg(member.as_slice())
                    .arg("d")
                    .arg(dead_json(&refusal, now))
                    .arg("");
            }
            let n: usize = self.conn().script(OP, &call).await?;
            moved += n;
            remaining -= due.len();
            if due.len() < want {
                break;
            }
        }
        Ok(moved)
    }

    pub(crate) async fn dead_letter_member(
        &self,
        queue: &str,
        member: &Member,
        reason: &str,
    ) -> Result<bool, StoreError> {
        const OP: Op = Op::DeadLetter;
        let now = self.now_ms(OP).await?;
        let q = self.keys().queue(queue);
        let mut call = self.scripts().dead_letter.prepare_invoke();
        call.key(&q.pending).key(&q.dead);
        call.arg(member.as_bytes()).arg(dead_json(reason, now));
        let moved: i64 = self.conn().script(OP, &call).await?;
        if moved == 1 {
            tracing::debug!(queue, "member dead-lettered");
        }
        Ok(moved == 1)
    }
}
