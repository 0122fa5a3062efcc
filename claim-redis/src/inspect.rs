//! Read-only inspection: peek, depths, claims, dead entries, retries, result lists, markers.

use crate::conn::Effect;
use crate::reply::{parse_dead, parse_owner};
use crate::store::RedisStore;
use claim_core::Op;
use claim_core::marker::parse_marker;
use claim_core::store::{ClaimInfo, DeadEntry, PendingEntry, QueueDepths};
use claim_core::{Generation, Member, Millis, OwnerToken, Score, StoreError};
use std::collections::HashMap;

impl RedisStore {
    pub(crate) async fn peek_pending(
        &self,
        queue: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<PendingEntry>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let start = i64::try_from(offset).unwrap_or(i64::MAX);
        let stop = start.saturating_add(i64::try_from(limit).unwrap_or(i64::MAX) - 1);
        let cmd = redis::cmd("ZRANGE")
            .arg(self.keys().queue(queue).pending)
            .arg(start)
            .arg(stop)
            .arg("WITHSCORES")
            .to_owned();
        self.scored(Op::Peek, &cmd).await
    }

    pub(crate) async fn list_retries(&self) -> Result<Vec<PendingEntry>, StoreError> {
        let cmd = redis::cmd("ZRANGE")
            .arg(self.keys().retry())
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .to_owned();
        self.scored(Op::RetryEntries, &cmd).await
    }

    async fn scored(&self, op: Op, cmd: &redis::Cmd) -> Result<Vec<PendingEntry>, StoreError> {
        let entries: Vec<(Vec<u8>, f64)> = self.conn().query(op, Effect::Read, cmd).await?;
        Ok(entries
            .into_iter()
            .map(|(member, score)| PendingEntry {
                member: Member::from(member),
                score: Score(score),
            })
            .collect())
    }

    pub(crate) async fn queue_depths(&self, queue: &str) -> Result<QueueDepths, StoreError> {
        let q = self.keys().queue(queue);
        let pipe = redis::pipe()
            .atomic()
            .zcard(&q.pending)
            .hlen(&q.owners)
            .hlen(&q.dead)
            .to_owned();
        let (pending, claimed, dead) = self.conn().pipe(Op::Depths, Effect::Read, &pipe).await?;
        Ok(QueueDepths {
            pending,
            claimed,
            dead,
        })
    }

    pub(crate) async fn list_claims(&self, queue: &str) -> Result<Vec<ClaimInfo>, StoreError> {
        let q = self.keys().queue(queue);
        let pipe = redis::pipe()
            .atomic()
            .hgetall(&q.owners)
            .hgetall(&q.claimed)
            .zrange_withscores(&q.index, 0, -1)
            .to_owned();
        type Snapshot = (
            Vec<(String, Vec<u8>)>,
            HashMap<String, Vec<u8>>,
            HashMap<String, f64>,
        );
        let (owners, mut members, expiries): Snapshot =
            self.conn().pipe(Op::Claims, Effect::Read, &pipe).await?;
        let mut claims: Vec<ClaimInfo> = owners
            .into_iter()
            .map(|(key, entry)| {
                let parsed = parse_owner(&entry);
                ClaimInfo {
                    generation: Generation::from_key(&key)
                        .unwrap_or_else(|| Generation::new(key.clone(), "")),
                    member: Member::from(members.remove(&key).unwrap_or_default()),
                    owner: OwnerToken::new(parsed.as_ref().map_or_else(
                        || String::from_utf8_lossy(&entry).into_owned(),
                        |e| e.owner.clone(),
                    )),
                    score: parsed.as_ref().map_or(Score(0.0), |e| e.score),
                    lease_expiry: expiries
                        .get(&key)
                        .map_or(Millis(0), |s| Score(*s).as_millis()),
                    redeliveries: parsed.map_or(0, |e| e.redeliveries),
                }
            })
            .collect();
        claims.sort_by(|a, b| a.generation.cmp(&b.generation));
        Ok(claims)
    }

    pub(crate) async fn list_dead(&self, queue: &str) -> Result<Vec<DeadEntry>, StoreError> {
        let cmd = redis::Cmd::hgetall(self.keys().queue(queue).dead);
        let mut raw: Vec<(Vec<u8>, Vec<u8>)> = self
            .conn()
            .query(Op::DeadEntries, Effect::Read, &cmd)
            .await?;
        raw.sort();
        Ok(raw
            .into_iter()
            .map(|(member, value)| parse_dead(member, &value))
            .collect())
    }

    pub(crate) async fn list_results(&self, list: &str) -> Result<Vec<Member>, StoreError> {
        let cmd = redis::Cmd::lrange(self.keys().list(list), 0, -1);
        let records: Vec<Vec<u8>> = self.conn().query(Op::Results, Effect::Read, &cmd).await?;
        Ok(records.into_iter().rev().map(Member::from).collect())
    }

    /// A marker holds its logical expiry; with server time Redis's own
    /// expiry already agrees with it, so existence is enough.
    pub(crate) async fn marker_live(&self, generation: &Generation) -> Result<bool, StoreError> {
        let cmd = redis::Cmd::get(self.keys().marker(generation));
        let value: Option<String> = self
            .conn()
            .query(Op::IsTerminal, Effect::Read, &cmd)
            .await?;
        Ok(match (value, self.explicit_now()) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(v), Some(now)) => parse_marker(&v).is_none_or(|(expiry, _)| expiry > now.0),
        })
    }
}
