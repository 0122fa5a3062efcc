//! The store's traits written out over Redis: each method runs its operation (a one-command one here, in sight), or calls the role file that builds its script call; claims and acks then wait for `replica_acks` replicas here.
//!
//! One file per role, the plain layout's body beside its hash-tagged
//! (cluster) counterpart (`<role>_cluster`), picked once per operation
//! (here, or in the role file) from the store's layout
//! (`RedisStore::layout`, fixed at construction): `claim`, `ack`, `leases`
//! (renew, reclaim, index repair), `retries` (park, promote, retry now),
//! `release` (a holder's or an operator's), `admin` (dead-letter, redrive,
//! purge, is-terminal; a pause is one command, here),
//! `stats` (read-only inspections), `producer` (submit, enqueue) and
//! `cancel` (cancel; cancel markers and payloads read). Shared: `call`
//! (every script call and multi-key command, slot-checked in the
//! hash-tagged layout) and `cluster` (per-request keys in other slots,
//! read and deleted one call per node; push once). Script replies and
//! argument tags are read and written in [`crate::codec`] only.

mod ack;
mod ack_cluster;
mod admin;
mod call;
mod cancel;
mod claim;
mod claim_cluster;
mod cluster;
mod leases;
mod leases_cluster;
mod producer;
mod release;
mod retries;
mod retries_cluster;
mod stats;

use crate::codec::{ack_outcome, parse_dead, pending_entries, score_arg};
use crate::conn::Effect;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use async_trait::async_trait;
use call::in_batches;
use claim_core::Result;
use claim_core::admin::{ClaimAdmin, Redrive, RetryNow};
use claim_core::store::{
    AckItem, AckOutcome, ClaimInfo, ClaimOutcome, ClaimRequest, DeadEntry, ParkItem, PendingEntry,
    QueueDepths, ReclaimReport, RenewOutcome, StoreConfig, Submission,
};
use claim_core::{
    ClaimInspect, ClaimProducer, ClaimStore, Generation, Holder, Member, Millis, Op, OwnerToken,
    Payload, Record, Score,
};

#[async_trait]
impl ClaimInspect for RedisStore {
    /// The sizes of a queue's pending set, live claims and dead hash, in
    /// one MULTI.
    async fn depths(&self, queue: &str) -> Result<QueueDepths> {
        let q = self.keys().queue(queue);
        let (pending, claimed, dead) =
            stats::sizes(self, Op::Depths, &q.pending, [&q.owners, &q.dead]).await?;
        Ok(QueueDepths {
            pending,
            claimed,
            dead,
        })
    }

    /// A ZCARD of each retry set.
    async fn retry_depth(&self) -> Result<usize> {
        let mut pipe = redis::pipe();
        for (_, set) in retries::retry_sets(self, Op::RetryDepth).await? {
            pipe.zcard(set);
        }
        let sizes: Vec<usize> = self
            .conn()
            .query(Op::RetryDepth, Effect::Read, &pipe)
            .await?;
        Ok(sizes.into_iter().sum())
    }

    async fn claims(&self, queue: &str) -> Result<Vec<ClaimInfo>> {
        stats::claims(self, queue).await
    }

    /// A queue's dead hash, each entry with its reason.
    async fn dead_entries(&self, queue: &str) -> Result<Vec<DeadEntry>> {
        let cmd = redis::Cmd::hgetall(self.keys().queue(queue).dead);
        let mut raw: Vec<(Vec<u8>, Vec<u8>)> = self
            .conn()
            .query(Op::DeadEntries, Effect::Read, &cmd)
            .await?;
        raw.sort();
        Ok(raw
            .into_iter()
            .map(|(m, value)| parse_dead(m, &value))
            .collect())
    }

    async fn retry_entries(&self) -> Result<Vec<PendingEntry>> {
        stats::retry_entries(self).await
    }

    /// Up to `n` members of the pending set scored above `after`, earliest
    /// first (ZRANGEBYSCORE: the admin CLI's `pending --after`).
    async fn peek_after(&self, queue: &str, after: Score, n: usize) -> Result<Vec<PendingEntry>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut cmd = redis::cmd("ZRANGEBYSCORE");
        cmd.arg(self.keys().queue(queue).pending)
            .arg(format!("({}", score_arg(after)))
            .arg("+inf")
            .arg("WITHSCORES")
            .arg("LIMIT")
            .arg(0)
            .arg(i64::try_from(n).unwrap_or(i64::MAX));
        let entries = self.conn().query(Op::PeekAfter, Effect::Read, &cmd).await?;
        Ok(pending_entries(entries))
    }

    async fn is_terminal(&self, generation: &Generation) -> Result<bool> {
        admin::is_terminal(self, generation).await
    }

    /// `LLEN` of the (prefixed) list; 0 when there is no key.
    async fn list_len(&self, list: &str) -> Result<usize> {
        let cmd = redis::cmd("LLEN").arg(self.keys().list(list)).to_owned();
        self.conn().query(Op::ListLen, Effect::Read, &cmd).await
    }

    /// Whether an operator paused claiming from `queue` (`<queue>:paused`
    /// exists).
    async fn paused(&self, queue: &str) -> Result<bool> {
        let cmd = redis::Cmd::exists(self.keys().queue(queue).paused);
        let n: i64 = self.conn().query(Op::Paused, Effect::Read, &cmd).await?;
        Ok(n > 0)
    }
}

#[async_trait]
impl ClaimStore for RedisStore {
    fn config(&self) -> &StoreConfig {
        &self.inner.config
    }

    async fn now(&self) -> Result<Millis> {
        self.now_ms(Op::Now).await
    }

    async fn ping(&self) -> Result<()> {
        let ping = redis::cmd("PING");
        let _: String = self.conn().query(Op::Ping, Effect::Read, &ping).await?;
        Ok(())
    }

    async fn fetch_payloads(&self, refs: &[String]) -> Result<Vec<Option<Payload>>> {
        cancel::fetch_payloads(self, refs).await
    }

    /// Up to `limit` members of the pending set from rank `offset`,
    /// earliest score first (ZRANGE).
    async fn peek(&self, queue: &str, offset: usize, limit: usize) -> Result<Vec<PendingEntry>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let first = i64::try_from(offset).unwrap_or(i64::MAX);
        let last = first.saturating_add(i64::try_from(limit).unwrap_or(i64::MAX) - 1);
        let mut cmd = redis::cmd("ZRANGE");
        cmd.arg(self.keys().queue(queue).pending)
            .arg(first)
            .arg(last)
            .arg("WITHSCORES");
        let entries = self.conn().query(Op::Peek, Effect::Read, &cmd).await?;
        Ok(pending_entries(entries))
    }

    /// A claimed batch is handed to workers only once `replica_acks`
    /// replicas have the claims (on the queue's slot), so a failover
    /// cannot hand the same members out again.
    async fn claim(&self, by: Holder<'_>, items: &[ClaimRequest]) -> Result<Vec<ClaimOutcome>> {
        let claim = claim::claim(self, by.queue, by.owner, items);
        self.replicated(Op::Claim, by.queue, claim).await
    }

    async fn renew(&self, by: Holder<'_>, generations: &[Generation]) -> Result<Vec<RenewOutcome>> {
        leases::renew(self, by.queue, by.owner, generations).await
    }

    async fn cancelled(&self, generations: &[Generation]) -> Result<Vec<bool>> {
        cancel::cancelled(self, generations).await
    }

    /// Acks wait for `replica_acks` replicas on the queue's primary. In
    /// the plain layout that is the one server every result list lives on
    /// too (a cluster always takes the hash-tagged layout); in the
    /// hash-tagged layout a list in another slot was waited for inside the
    /// ack, before its claims were dropped (`ack_cluster`).
    async fn ack(&self, by: Holder<'_>, items: &[AckItem]) -> Result<Vec<AckOutcome>> {
        let (queue, owner) = (by.queue, by.owner);
        let ack = async {
            let codes = match self.layout() {
                KeyLayout::Plain => {
                    in_batches(items, |c| ack::one_call(self, (queue, owner), c)).await?
                }
                KeyLayout::HashTagged => {
                    let q = self.keys().queue(queue);
                    in_batches(items, |c| {
                        ack_cluster::one_call(self, (queue, &q), owner, c)
                    })
                    .await?
                }
            };
            Ok(codes.into_iter().map(ack_outcome).collect())
        };
        self.replicated(Op::Ack, by.queue, ack).await
    }

    async fn release(&self, by: Holder<'_>, generations: &[Generation]) -> Result<Vec<bool>> {
        release::release(self, by.queue, by.owner, generations).await
    }

    async fn park_retry(&self, by: Holder<'_>, items: &[ParkItem]) -> Result<Vec<bool>> {
        retries::park_retry(self, by.queue, by.owner, items).await
    }

    async fn promote_due(&self, limit: usize) -> Result<usize> {
        match self.layout() {
            KeyLayout::Plain => retries::promote_due(self, limit).await,
            KeyLayout::HashTagged => retries_cluster::promote_due(self, limit).await,
        }
    }

    async fn reclaim_expired(&self, queue: &str, limit: usize) -> Result<ReclaimReport> {
        leases::reclaim_expired(self, queue, limit).await
    }

    async fn dead_letter(&self, queue: &str, member: &Member, reason: &str) -> Result<bool> {
        admin::dead_letter(self, queue, member, reason).await
    }
}

#[async_trait]
impl ClaimProducer for RedisStore {
    async fn submit(&self, queue: &str, submission: &Submission) -> Result<()> {
        producer::submit(self, queue, submission).await
    }

    async fn enqueue(&self, queue: &str, submission: &Submission) -> Result<Member> {
        producer::enqueue(self, queue, submission).await
    }

    async fn cancel(&self, id: &str) -> Result<bool> {
        cancel::cancel(self, id).await
    }
}

#[async_trait]
impl ClaimAdmin for RedisStore {
    async fn redrive_dead(&self, queue: &str, members: &[Member]) -> Result<Vec<Redrive>> {
        admin::redrive_dead(self, queue, members).await
    }

    async fn purge_dead(&self, queue: &str, members: &[Member]) -> Result<Vec<bool>> {
        admin::purge_dead(self, queue, members).await
    }

    async fn release_claim(
        &self,
        queue: &str,
        generation: &Generation,
    ) -> Result<Option<OwnerToken>> {
        release::release_claim(self, queue, generation).await
    }

    /// Pauses (`SET <queue>:paused 1 GET`) or resumes (`DEL
    /// <queue>:paused`) claiming from a queue: no script, each one command,
    /// atomic on its own, on one queue's key (one cluster slot). Its answer
    /// says whether it changed the flag: `SET .. GET` returns the value
    /// before (nil when the queue was running), `DEL` the number of keys
    /// deleted.
    async fn set_paused(&self, queue: &str, paused: bool) -> Result<bool> {
        let key = self.keys().queue(queue).paused;
        let changed = if paused {
            let cmd = redis::cmd("SET").arg(&key).arg("1").arg("GET").to_owned();
            let before: Option<String> = self
                .conn()
                .query(Op::SetPaused, Effect::Write, &cmd)
                .await?;
            before.is_none()
        } else {
            let cmd = redis::Cmd::del(&key);
            let n: i64 = self
                .conn()
                .query(Op::SetPaused, Effect::Write, &cmd)
                .await?;
            n > 0
        };
        tracing::info!(queue, paused, changed, "queue pause flag set");
        Ok(changed)
    }

    async fn retry_now(&self, member: &Member) -> Result<RetryNow> {
        match self.layout() {
            KeyLayout::Plain => retries::retry_now(self, member).await,
            KeyLayout::HashTagged => retries_cluster::retry_now(self, member).await,
        }
    }
}

/// Whole-list reads for tests, tools and the demo (`LRANGE`, `TTL`).
#[async_trait]
impl claim_core::ListReads for RedisStore {
    /// A result list's records, oldest first (the order BRPOP yields).
    async fn results(&self, list: &str) -> Result<Vec<Record>> {
        let cmd = redis::Cmd::lrange(self.keys().list(list), 0, -1);
        let records: Vec<Vec<u8>> = self.conn().query(Op::Results, Effect::Read, &cmd).await?;
        Ok(records.into_iter().rev().map(Record::from).collect())
    }

    /// `TTL` of the (prefixed) list: `None` when it has no expiry or no key.
    async fn list_ttl(&self, list: &str) -> Result<Option<u64>> {
        let cmd = redis::cmd("TTL").arg(self.keys().list(list)).to_owned();
        let ttl: i64 = self.conn().query(Op::ListTtl, Effect::Read, &cmd).await?;
        Ok(u64::try_from(ttl).ok())
    }
}
