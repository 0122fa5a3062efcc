//! The conformance factory the Redis conformance targets share: stores on one private server, in a given key layout, each with a fresh key prefix.
//!
//! `tests/conformance.rs` runs the suite on the plain layout,
//! `tests/conformance_tagged.rs` on the hash-tagged (cluster) one, where
//! every call is checked to stay in one slot, and
//! `tests/conformance_cluster.rs` on a real Redis Cluster. None lists
//! checks of its own: `claim_conformance::conformance_tests!` and
//! [`model_based_tests!`] do.

#![allow(dead_code)]

use crate::common;
use async_trait::async_trait;
use claim_conformance::{StoreFactory, T0};
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

/// The model-based tests on stores of `Redis::start(LAYOUT)`, `LAYOUT`
/// being a constant of the invoking test target (or of the factory
/// expression given): random workloads against the claim-core model (32
/// cases each, or `cases: N`; more if `PROPTEST_CASES` says so).
#[macro_export]
macro_rules! model_based_tests {
    () => {
        $crate::model_based_tests!(Redis::start(LAYOUT));
    };
    ($factory:expr) => {
        $crate::model_based_tests!($factory, cases: 32);
    };
    ($factory:expr, cases: $cases:expr) => {
        mod model_based {
            #[allow(unused_imports)]
            use super::*;
            use claim_conformance::model_based::{self, Driver, Options};
            use claim_conformance::unreliable::FaultRates;
            use std::future::Future;

            /// One tokio runtime for every case: the stores' pools live on it.
            struct Tokio(tokio::runtime::Runtime);

            impl Driver for Tokio {
                fn block_on<Fut: Future>(&self, future: Fut) -> Fut::Output {
                    self.0.block_on(future)
                }
            }

            fn driver() -> Tokio {
                Tokio(tokio::runtime::Runtime::new().expect("tokio runtime"))
            }

            #[test]
            fn the_redis_store_follows_the_model_through_random_workloads_and_drains_to_one_record_per_generation()
             {
                let Some(redis) = $factory else { return };
                model_based::run(&redis, &driver(), Options::cases($cases));
            }

            #[test]
            fn the_redis_store_follows_the_model_through_determinate_and_indeterminate_faults() {
                let Some(redis) = $factory else { return };
                let options = Options::cases($cases).with_faults(FaultRates::new(0.15, 0.15));
                model_based::run(&redis, &driver(), options);
            }
        }
    };
}
