//! The store's traits, written out: every method is one call of its function in `ops/` (the store first), and claims and acks then wait for `replica_acks` replicas here, in sight.

use super::RedisStore;
use crate::ops;
use async_trait::async_trait;
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
    async fn depths(&self, queue: &str) -> Result<QueueDepths> {
        ops::depths::depths(self, queue).await
    }

    async fn retry_depth(&self) -> Result<usize> {
        ops::retry_depth::retry_depth(self).await
    }

    async fn claims(&self, queue: &str) -> Result<Vec<ClaimInfo>> {
        ops::claims::claims(self, queue).await
    }

    async fn dead_entries(&self, queue: &str) -> Result<Vec<DeadEntry>> {
        ops::dead_entries::dead_entries(self, queue).await
    }

    async fn retry_entries(&self) -> Result<Vec<PendingEntry>> {
        ops::retry_entries::retry_entries(self).await
    }

    async fn peek_after(&self, queue: &str, after: Score, n: usize) -> Result<Vec<PendingEntry>> {
        ops::peek::peek(self, queue, ops::peek::Start::Above(after), n).await
    }

    async fn is_terminal(&self, generation: &Generation) -> Result<bool> {
        ops::is_terminal::is_terminal(self, generation).await
    }

    async fn list_len(&self, list: &str) -> Result<usize> {
        ops::list_len::list_len(self, list).await
    }

    async fn paused(&self, queue: &str) -> Result<bool> {
        ops::paused::paused(self, queue).await
    }
}

#[async_trait]
impl ClaimStore for RedisStore {
    fn config(&self) -> &StoreConfig {
        &self.inner.config
    }

    async fn now(&self) -> Result<Millis> {
        ops::now::now(self).await
    }

    async fn ping(&self) -> Result<()> {
        ops::ping::ping(self).await
    }

    async fn fetch_payloads(&self, refs: &[String]) -> Result<Vec<Option<Payload>>> {
        ops::fetch_payloads::fetch_payloads(self, refs).await
    }

    async fn peek(&self, queue: &str, offset: usize, limit: usize) -> Result<Vec<PendingEntry>> {
        ops::peek::peek(self, queue, ops::peek::Start::Rank(offset), limit).await
    }

    /// A claimed batch is handed to workers only once `replica_acks`
    /// replicas have the claims (on the queue's slot), so a failover
    /// cannot hand the same members out again.
    async fn claim(&self, by: Holder<'_>, items: &[ClaimRequest]) -> Result<Vec<ClaimOutcome>> {
        let claim = ops::claim::claim(self, by.queue, by.owner, items);
        self.replicated(Op::Claim, by.queue, claim).await
    }

    async fn renew(&self, by: Holder<'_>, generations: &[Generation]) -> Result<Vec<RenewOutcome>> {
        ops::renew::renew(self, by.queue, by.owner, generations).await
    }

    async fn cancelled(&self, generations: &[Generation]) -> Result<Vec<bool>> {
        ops::cancelled::cancelled(self, generations).await
    }

    /// Acks wait for `replica_acks` replicas on the queue's primary. In
    /// the plain layout that is the one server every result list lives on
    /// too (a cluster always takes the hash-tagged layout); in the
    /// hash-tagged layout a list in another slot was waited for inside the
    /// ack, before its claims were dropped (`ops/cluster/ack.rs`).
    async fn ack(&self, by: Holder<'_>, items: &[AckItem]) -> Result<Vec<AckOutcome>> {
        let ack = ops::ack::ack(self, by.queue, by.owner, items);
        self.replicated(Op::Ack, by.queue, ack).await
    }

    async fn release(&self, by: Holder<'_>, generations: &[Generation]) -> Result<Vec<bool>> {
        ops::release::release(self, by.queue, by.owner, generations).await
    }

    async fn park_retry(&self, by: Holder<'_>, items: &[ParkItem]) -> Result<Vec<bool>> {
        ops::park_retry::park_retry(self, by.queue, by.owner, items).await
    }

    async fn promote_due(&self, limit: usize) -> Result<usize> {
        ops::promote::promote_due(self, limit).await
    }

    async fn reclaim_expired(&self, queue: &str, limit: usize) -> Result<ReclaimReport> {
        ops::reclaim::reclaim_expired(self, queue, limit).await
    }

    async fn dead_letter(&self, queue: &str, member: &Member, reason: &str) -> Result<bool> {
        ops::dead_letter::dead_letter(self, queue, member, reason).await
    }
}

#[async_trait]
impl ClaimProducer for RedisStore {
    async fn submit(&self, queue: &str, submission: &Submission) -> Result<()> {
        ops::submit::submit(self, queue, submission).await
    }

    async fn enqueue(&self, queue: &str, submission: &Submission) -> Result<Member> {
        ops::enqueue::enqueue(self, queue, submission).await
    }

    async fn cancel(&self, id: &str) -> Result<bool> {
        ops::cancel::cancel(self, id).await
    }
}

#[async_trait]
impl ClaimAdmin for RedisStore {
    async fn redrive_dead(&self, queue: &str, members: &[Member]) -> Result<Vec<Redrive>> {
        ops::redrive_dead::redrive_dead(self, queue, members).await
    }

    async fn purge_dead(&self, queue: &str, members: &[Member]) -> Result<Vec<bool>> {
        ops::purge_dead::purge_dead(self, queue, members).await
    }

    async fn release_claim(
        &self,
        queue: &str,
        generation: &Generation,
    ) -> Result<Option<OwnerToken>> {
        ops::release_claim::release_claim(self, queue, generation).await
    }

    async fn set_paused(&self, queue: &str, paused: bool) -> Result<bool> {
        ops::set_paused::set_paused(self, queue, paused).await
    }

    async fn retry_now(&self, member: &Member) -> Result<RetryNow> {
        ops::retry_now::retry_now(self, member).await
    }
}

/// Whole-list reads for tests, tools and the demo (`LRANGE`, `TTL`).
#[async_trait]
impl claim_core::ListReads for RedisStore {
    async fn results(&self, list: &str) -> Result<Vec<Record>> {
        ops::results::results(self, list).await
    }

    async fn list_ttl(&self, list: &str) -> Result<Option<u64>> {
        ops::list_ttl::list_ttl(self, list).await
    }
}
