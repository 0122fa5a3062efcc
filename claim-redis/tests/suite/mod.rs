//! The conformance factory the Redis conformance targets share: stores on one private server, in a given key layout, each with a fresh key prefix.
//!
//! `tests/conformance.rs` runs the suite on the plain layout,
//! `tests/conformance_tagged.rs` on the hash-tagged (cluster) one, where
//! every call is checked to stay in one slot, and
//! `tests/conformance_cluster.rs` on a real Redis Cluster. None lists
//! checks of its own: each is a `harness = false` target whose main is
//! `claim_conformance::run`.

#![allow(dead_code)]

use crate::common;
use async_trait::async_trait;
use claim_conformance::{ModelBased, Options, ServerTime, StoreFactory, T0};
use claim_core::store::StoreConfig;
use claim_core::{ClaimStore, Clock, ManualClock, Millis};
use claim_redis::testing::{RedisCluster, RedisServer, RedisServerOptions, require_redis_server};
use claim_redis::{KeyLayout, RedisStore, TimeSource, Topology};
use std::sync::Arc;
use std::time::Duration;

/// Where the stores connect.
enum Target {
    /// A private standalone server.
    Server(RedisServer),
    /// The test binary's shared cluster (`Topology::Cluster`; the store
    /// forces the hash-tagged layout).
    Cluster(&'static RedisCluster),
}

/// Stores on one private server (or the shared cluster), each with a fresh key prefix.
pub struct Redis {
    target: Target,
    /// Stores read the server's clock instead of the check's manual clock.
    server_time: bool,
    layout: KeyLayout,
}

impl Redis {
    /// A private server, or `None` when `redis-server` is missing outside CI.
    pub fn start(layout: KeyLayout) -> Option<Redis> {
        let server = common::server(RedisServerOptions::default())?;
        Some(Redis {
            target: Target::Server(server),
            server_time: false,
            layout,
        })
    }

    /// Stores on the shared test cluster (three primaries, one replica
    /// each), or `None` when `redis-server` is missing outside CI.
    pub fn cluster() -> Option<Redis> {
        if require_redis_server().is_none() {
            eprintln!("skipped: redis-server not on PATH");
            return None;
        }
        let cluster = RedisCluster::shared().expect("start the shared test cluster");
        Some(Redis {
            target: Target::Cluster(cluster),
            server_time: false,
            layout: KeyLayout::HashTagged,
        })
    }

    /// Stores on the server's clock, and what that clock reads now.
    pub async fn on_server_time(layout: KeyLayout) -> Option<(Redis, Millis)> {
        Redis::now_on_server_time(Redis::start(layout)?).await
    }

    /// Cluster stores on the servers' clock, and what it reads now.
    pub async fn cluster_on_server_time() -> Option<(Redis, Millis)> {
        Redis::now_on_server_time(Redis::cluster()?).await
    }

    async fn now_on_server_time(mut redis: Redis) -> Option<(Redis, Millis)> {
        redis.server_time = true;
        let probe = redis
            .make(StoreConfig::default(), ManualClock::new(T0))
            .await;
        let now = probe.now().await.expect("the server's TIME");
        Some((redis, now))
    }
}

#[async_trait]
impl StoreFactory for Redis {
    type Store = RedisStore;

    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> RedisStore {
        let time = if self.server_time {
            TimeSource::Server
        } else {
            TimeSource::Clock(clock as Arc<dyn Clock>)
        };
        let (url, topology) = match &self.target {
            Target::Server(server) => (server.url(), Topology::Standalone),
            Target::Cluster(cluster) => (
                cluster.url(),
                Topology::Cluster {
                    seeds: cluster.seeds(),
                },
            ),
        };
        let options = claim_redis::RedisStoreOptions {
            pool_size: 4,
            call_timeout: Duration::from_secs(10),
            key_layout: self.layout,
            topology,
            ..common::options(&url, config, time)
        };
        RedisStore::connect(options)
            .await
            .expect("connect to the test's redis-server")
    }
}

/// What every Redis target runs besides the plain and admin passes: two
/// fault seeds, the server-time pass on `server_time`'s stores, and the
/// model-based tests with `cases` cases each (more if `PROPTEST_CASES`
/// says so).
pub fn options(server_time: ServerTime<Redis>, cases: u32) -> Options<Redis> {
    Options {
        fault_seeds: &[1, 2],
        server_time: Some(server_time),
        model_based: Some(ModelBased {
            store: "redis",
            cases,
        }),
    }
}
