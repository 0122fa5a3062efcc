//! The Redis a run works on, by `--topology`: one redis-server, a cluster (three primaries with a replica each), or a primary and replica behind three sentinels; how the store, the workers and the run's own connections reach it.

use crate::plan::{Layout, Plan};
use crate::raw::Target;
use crate::{QUEUE, RESULTS};
use claim_core::store::StoreConfig;
use claim_redis::testing::{
    MASTER_NAME, RedisCluster, RedisServer, RedisServerOptions, SentinelGroup,
};
use claim_redis::{RedisStore, RedisStoreOptions, Topology};
use serde_json::{Map, Value, json};
use std::path::Path;

/// The running servers; each kind kills its processes on drop.
pub enum Deployment {
    Standalone(RedisServer),
    Cluster(RedisCluster),
    Sentinel(SentinelGroup),
}

impl Deployment {
    /// Starts the plan's topology and waits until it serves (blocking).
    pub fn start(plan: &Plan) -> Result<Deployment, String> {
        match plan.layout {
            Layout::Standalone => RedisServer::start(RedisServerOptions { aof_always: true })
                .map(Deployment::Standalone)
                .map_err(|e| format!("starting redis-server: {e}")),
            Layout::Cluster => RedisCluster::start()
                .map(Deployment::Cluster)
                .map_err(|e| format!("starting a Redis Cluster (needs redis-cli too): {e}")),
            Layout::Sentinel => SentinelGroup::start()
                .map(Deployment::Sentinel)
                .map_err(|e| format!("starting a Sentinel group: {e}")),
        }
    }

    /// The URL a client is given first (the server, a node, a sentinel).
    pub fn url(&self) -> String {
        match self {
            Deployment::Standalone(s) => s.url(),
            Deployment::Cluster(c) => c.url(),
            Deployment::Sentinel(g) => g.url(),
        }
    }

    /// The store's options: the URL and the topology.
    pub fn store_options(&self, config: StoreConfig) -> RedisStoreOptions {
        let topology = match self {
            Deployment::Standalone(_) => Topology::Standalone,
            Deployment::Cluster(c) => Topology::Cluster { seeds: c.seeds() },
            Deployment::Sentinel(g) => Topology::Sentinel {
                sentinels: g.other_sentinels(),
                master_name: MASTER_NAME.to_owned(),
            },
        };
        RedisStoreOptions {
            topology,
            ..RedisStoreOptions::new(self.url(), config)
        }
    }

    /// The transport config's `mode`, `addrs` and `master_name` (Go's
    /// fields) beside `url`; nothing in standalone.
    pub fn transport_fields(&self, plan: &Plan) -> Map<String, Value> {
        let mut fields = Map::new();
        match self {
            Deployment::Standalone(_) => {}
            Deployment::Cluster(c) => {
                fields.insert("mode".into(), json!("cluster"));
                fields.insert("addrs".into(), json!(c.seeds()));
            }
            Deployment::Sentinel(g) => {
                fields.insert("mode".into(), json!("sentinel"));
                fields.insert("addrs".into(), json!(g.other_sentinels()));
                fields.insert("master_name".into(), json!(MASTER_NAME));
            }
        }
        if plan.layout.replicated() {
            fields.insert("replica_acks".into(), json!(plan.replica_acks));
        }
        fields
    }

    /// Where the run's own connections go.
    pub fn target(&self) -> Target {
        match self {
            Deployment::Standalone(s) => Target::Server(s.url()),
            Deployment::Cluster(c) => Target::Cluster(c.seeds()),
            Deployment::Sentinel(g) => {
                let first = g.url().trim_start_matches("redis://").to_owned();
                let mut sentinels = vec![first];
                sentinels.extend(g.other_sentinels());
                Target::Sentinel {
                    sentinels,
                    master_name: MASTER_NAME.to_owned(),
                }
            }
        }
    }

    /// Which primaries hold the queue and the result list: in a cluster
    /// they must be two different ones, so every ack takes the split path
    /// (push once in the list's slot, then the claim drop in the queue's).
    pub fn placement(&self, store: &RedisStore) -> Result<String, String> {
        let found = |what: &str, e: std::io::Error| format!("finding the {what}: {e}");
        match self {
            Deployment::Standalone(s) => Ok(format!("one redis-server on port {}", s.port())),
            Deployment::Sentinel(g) => {
                let port = g.primary_port().map_err(|e| found("primary", e))?;
                Ok(format!(
                    "primary on port {port}, one replica, three sentinels (master name {MASTER_NAME})"
                ))
            }
            Deployment::Cluster(c) => {
                let pending = store.keys().queue(QUEUE).pending;
                let list = store.keys().list(RESULTS);
                let queue_slot = c.key_slot(&pending).map_err(|e| found("queue's slot", e))?;
                let list_slot = c.key_slot(&list).map_err(|e| found("list's slot", e))?;
                let queue_primary = c
                    .primary_of_slot(queue_slot)
                    .map_err(|e| found("queue's primary", e))?;
                let list_primary = c
                    .primary_of_slot(list_slot)
                    .map_err(|e| found("list's primary", e))?;
                if queue_primary == list_primary {
                    return Err(format!(
                        "the queue `{pending}` (slot {queue_slot}) and the result list `{list}` (slot {list_slot}) are on one primary ({queue_primary}): rename one so the acks take the split path"
                    ));
                }
                Ok(format!(
                    "three primaries with a replica each; queue `{pending}` in slot {queue_slot} on the primary at port {queue_primary}, result list `{list}` in slot {list_slot} on the primary at port {list_primary} (every ack: push once there, then the claim drop in the queue's slot)"
                ))
            }
        }
    }

    /// Where the servers' logs are, to keep them when a run fails.
    pub fn log_dir(&self) -> Option<&Path> {
        match self {
            Deployment::Standalone(s) => Some(s.data_dir()),
            _ => None,
        }
    }
}
