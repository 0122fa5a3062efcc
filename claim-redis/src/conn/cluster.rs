//! The cluster client behind the store, replaced by a fresh one when it stops answering altogether.
//!
//! redis-rs's async cluster client repairs broken node connections and
//! refreshes its slot map itself, and nearly always comes back within a
//! few seconds of a failover. But in the chaos run with a primary SIGKILLed
//! (`cargo xtask chaos --topology cluster`, seeds 156910191 and 393777162)
//! one worker's client began a slot refresh that never finished: every
//! later call timed out for a minute, until the worker was stopped, while
//! the other workers' clients recovered in under 3 s. Nothing was lost (its
//! claims lapsed and were redelivered), but a worker that never recovers is
//! a loop without a way out. So a timeout is counted; an answer of any
//! kind (even an error) resets the count; after [`STUCK_AFTER`] timeouts
//! in a row the next call first builds a new client connection from the
//! seeds (bounded by the call timeout) and every later call uses it. Calls
//! still running on the old one finish or time out on their own.

use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// Timeouts in a row after which the client counts as stuck. A healthy
/// client fails over within one or two call timeouts; three in a row with
/// not one answer in between is a client that is not repairing itself.
pub(crate) const STUCK_AFTER: u32 = 3;

/// A cluster client that replaces its connection when it is stuck.
pub(crate) struct ClusterBackend {
    client: ClusterClient,
    current: RwLock<ClusterConnection>,
    timeouts_in_a_row: AtomicU32,
    rebuilds: AtomicU64,
    rebuilding: tokio::sync::Mutex<()>,
    /// Which node serves each slot, for the per-node calls
    /// (`conn/slot_map.rs`).
    pub(crate) slot_map: super::slot_map::SlotMapCache,
}

impl ClusterBackend {
    pub(crate) fn new(client: ClusterClient, conn: ClusterConnection) -> Arc<Self> {
        Arc::new(ClusterBackend {
            client,
            current: RwLock::new(conn),
            timeouts_in_a_row: AtomicU32::new(0),
            rebuilds: AtomicU64::new(0),
            rebuilding: tokio::sync::Mutex::new(()),
            slot_map: Default::default(),
        })
    }

    /// The connection calls use now (a cheap clone of the client handle).
    pub(crate) fn connection(&self) -> ClusterConnection {
        self.current
            .read()
            .expect("cluster connection lock")
            .clone()
    }

    /// The connection for the next call: a new one first when the current
    /// one is stuck. A failed rebuild keeps the old one (the next call tries
    /// again), so a cluster that is really down is reported as before.
    pub(crate) async fn checkout(&self, timeout: Duration) -> ClusterConnection {
        if self.timeouts_in_a_row.load(Ordering::Relaxed) >= STUCK_AFTER
            && let Ok(_only_one) = self.rebuilding.try_lock()
            && self.timeouts_in_a_row.load(Ordering::Relaxed) >= STUCK_AFTER
        {
            match tokio::time::timeout(timeout, self.client.get_async_connection()).await {
                Ok(Ok(fresh)) => {
                    *self.current.write().expect("cluster connection lock") = fresh;
                    self.timeouts_in_a_row.store(0, Ordering::Relaxed);
                    self.rebuilds.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        timeouts = STUCK_AFTER,
                        "the Redis Cluster client stopped answering; replaced it with a new connection"
                    );
                }
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "rebuilding the stuck Redis Cluster client failed; trying again on the next call")
                }
                Err(_) => tracing::warn!(
                    ?timeout,
                    "rebuilding the stuck Redis Cluster client timed out; trying again on the next call"
                ),
            }
        }
        self.connection()
    }

    /// Records how a call ended: `answered` is false for a timeout.
    pub(crate) fn observe(&self, answered: bool) {
        if answered {
            self.timeouts_in_a_row.store(0, Ordering::Relaxed);
        } else {
            self.timeouts_in_a_row.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How many times the client was replaced.
    pub(crate) fn rebuilds(&self) -> u64 {
        self.rebuilds.load(Ordering::Relaxed)
    }
}
