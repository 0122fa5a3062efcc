//! `replica_acks`: after each claim and ack batch, `WAIT` for that many replicas on the node(s) that took the writes; a shortfall is logged and counted, never an error (the write happened on the primary).
//!
//! `WAIT` covers the writes of the connection it runs on. A cluster client
//! keeps one multiplexed connection per node, so a `WAIT` routed to the
//! primary of the written slot covers the batch. A pool (standalone,
//! Sentinel) may have run the script on another connection, so there the
//! `WAIT` is preceded on its own connection by a write of a fence key
//! (`<prefix>claim-redis:replica-fence`, expiring after a minute): its
//! replication offset is at or past the script's, so replicas that
//! acknowledged the fence hold the batch too.
//!
//! What it buys: a claim or ack is on `replica_acks` replicas before the
//! caller goes on, so a failover to one of them loses neither (without it a
//! failover can lose the last writes: a lost claim only redelivers, a lost
//! ack makes the request run again and publish a second record; see
//! docs/OPERATIONS.md, "Topologies"). What it costs: one more round trip
//! per batch, plus the replication delay, and a multiplexed connection is
//! blocked while its `WAIT` lasts.

use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::{Op, StoreError};
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long one `WAIT` may block at most (also bounded by half the call
/// timeout).
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(1);

/// What the `WAIT`s of a store have seen so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplicaAckStats {
    /// `WAIT`s sent (one per written node per batch).
    pub waits: u64,
    /// `WAIT`s that reached fewer replicas than `replica_acks` within
    /// their timeout (or failed): the batch is on the primary only.
    pub shortfalls: u64,
}

impl RedisStore {
    /// What the `WAIT`s after claims and acks have seen (all zero when
    /// `replica_acks` is 0).
    pub fn replica_ack_stats(&self) -> ReplicaAckStats {
        let c = &self.inner.replicas;
        ReplicaAckStats {
            waits: c.waits.load(Ordering::Relaxed),
            shortfalls: c.shortfalls.load(Ordering::Relaxed),
        }
    }

    /// Runs `call` (a claim or an ack on `queue`), then waits for
    /// `replica_acks` replicas on the primary of `queue`'s slot (its pending
    /// set's) before answering. With none asked it answers before building
    /// the key, so the hot path pays nothing.
    pub(crate) async fn replicated<T>(
        &self,
        op: Op,
        queue: &str,
        call: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let out = call.await?;
        if self.inner.replica_acks > 0 {
            let pending = self.keys().queue(queue).pending;
            self.wait_replicas(op, &[pending.as_str()]).await;
        }
        Ok(out)
    }

    /// Waits for `replica_acks` replicas on the primary of each of `keys`'
    /// slots (one `WAIT` per distinct slot; in standalone and Sentinel one
    /// in all). Never fails: a shortfall or an error is logged and counted.
    pub(crate) async fn wait_replicas(&self, op: Op, keys: &[&str]) {
        let wanted = self.inner.replica_acks;
        if wanted == 0 || keys.is_empty() {
            return;
        }
        let targets: Vec<&str> = if self.conn().cluster().is_some() {
            let mut seen = std::collections::HashSet::new();
            keys.iter()
                .copied()
                .filter(|k| seen.insert(redis::cluster_routing::Slot::for_key(k)))
                .collect()
        } else {
            keys[..1].to_vec()
        };
        for key in targets {
            self.wait_counted(op, key, wanted).await;
        }
    }

    /// One `WAIT` for `replica_acks` replicas on the primary of `key`'s
    /// slot (standalone, Sentinel: the primary), counted as
    /// [`Self::wait_replicas`] counts it: true when enough replicas
    /// acknowledged (always when `replica_acks` is 0). The split ack asks
    /// it for a result list before it drops the claims.
    pub(crate) async fn wait_replicated(&self, op: Op, key: &str) -> bool {
        let wanted = self.inner.replica_acks;
        wanted == 0 || self.wait_counted(op, key, wanted).await
    }

    async fn wait_counted(&self, op: Op, key: &str, wanted: u32) -> bool {
        let counters = &self.inner.replicas;
        counters.waits.fetch_add(1, Ordering::Relaxed);
        let ms = MAX_WAIT.min(self.conn().timeout() / 2).as_millis().max(1) as u64;
        match self.wait_one(op, key, wanted, ms).await {
            Ok(reached) if reached >= i64::from(wanted) => return true,
            Ok(reached) => tracing::warn!(
                ?op,
                wanted,
                reached,
                timeout_ms = ms,
                "fewer replicas than replica_acks acknowledged the batch; it is on the primary only"
            ),
            Err(e) => tracing::warn!(?op, wanted, error = %e,
                "WAIT for replicas failed; the batch is on the primary only"),
        }
        counters.shortfalls.fetch_add(1, Ordering::Relaxed);
        false
    }

    async fn wait_one(&self, op: Op, key: &str, wanted: u32, ms: u64) -> Result<i64, StoreError> {
        let mut wait = redis::cmd("WAIT");
        wait.arg(wanted).arg(ms);
        let bound = Duration::from_millis(ms) + self.conn().timeout();
        if let Some(cluster) = self.conn().cluster() {
            let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(
                Route::with_key(key, SlotAddr::Master),
            ));
            let mut cluster = cluster.clone();
            let reply = tokio::time::timeout(bound, cluster.route_command(wait, route))
                .await
                .map_err(|_| StoreError::failed(op, "WAIT: no answer in time"))?
                .map_err(|e| crate::conn::classify(op, Effect::Read, &e))?;
            return redis::from_redis_value(reply)
                .map_err(|e| crate::conn::bad_reply(op, Effect::Read, e));
        }
        let mut fence = redis::pipe();
        fence
            .cmd("SET")
            .arg(format!("{}claim-redis:replica-fence", self.keys().prefix()))
            .arg(1)
            .arg("PX")
            .arg(60_000)
            .ignore()
            .add_command(wait);
        let (reached,): (i64,) = self.conn().query(op, Effect::Write, &fence).await?;
        Ok(reached)
    }
}
