//! The claim-core conformance suite and the model-based test on a real Redis Cluster (three primaries, one replica each) through `Topology::Cluster`: the same checks and passes as `conformance.rs` on one node, with the hash-tagged layout.
//!
//! One cluster serves the whole test binary (`RedisCluster::shared`); each
//! store gets a fresh random key prefix. The server refuses any call whose
//! keys span slots (CROSSSLOT), so a passing check also proves its calls
//! stay in one slot.

mod common;

use async_trait::async_trait;
use claim_core::conformance::{StoreFactory, T0};
use claim_core::store::StoreConfig;
use claim_core::{ClaimStore, Clock, ManualClock, Millis};
use claim_redis::testing::{RedisCluster, require_redis_server};
use claim_redis::{RedisStore, TimeSource, Topology};
use std::sync::Arc;
use std::time::Duration;

/// Stores on the shared cluster, each with a fresh key prefix.
struct Cluster {
    cluster: &'static RedisCluster,
    /// Stores read the server's clock instead of the check's manual clock.
    server_time: bool,
}

impl Cluster {
    /// The shared cluster, or `None` when `redis-server` is missing outside CI.
    fn start() -> Option<Cluster> {
        if require_redis_server().is_none() {
            eprintln!("skipped: redis-server not on PATH");
            return None;
        }
        let cluster = RedisCluster::shared().expect("start the shared test cluster");
        Some(Cluster {
            cluster,
            server_time: false,
        })
    }

    /// Stores on the servers' clock, and what that clock reads now.
    async fn on_server_time() -> Option<(Cluster, Millis)> {
        let mut cluster = Cluster::start()?;
        cluster.server_time = true;
        let probe = cluster
            .make(StoreConfig::default(), ManualClock::new(T0))
            .await;
        let now = probe.now().await.expect("the server's TIME");
        Some((cluster, now))
    }
}

#[async_trait]
impl StoreFactory for Cluster {
    type Store = RedisStore;

    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> RedisStore {
        let time = if self.server_time {
            TimeSource::Server
        } else {
            TimeSource::Clock(clock as Arc<dyn Clock>)
        };
        let options = claim_redis::RedisStoreOptions {
            call_timeout: Duration::from_secs(10),
            topology: Topology::Cluster {
                seeds: self.cluster.seeds(),
            },
            ..common::options(&self.cluster.url(), config, time)
        };
        RedisStore::connect(options)
            .await
            .expect("connect to the test cluster")
    }
}

claim_core::conformance_tests! {
    factory: Cluster::start(),
    fault_seeds: &[1, 2],
    server_time: Cluster::on_server_time().await,
}

/// Random workloads against the claim-core model on the cluster.
mod model_based {
    use super::Cluster;
    use claim_core::conformance::model_based::{self, Driver, Options};
    use claim_core::conformance::unreliable::FaultRates;
    use std::future::Future;

    /// One tokio runtime for every case: the stores' connections live on it.
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
    fn the_cluster_store_follows_the_model_through_random_workloads_and_drains_to_one_record_per_generation()
     {
        let Some(cluster) = Cluster::start() else {
            return;
        };
        model_based::run(&cluster, &driver(), Options::cases(32));
    }

    #[test]
    fn the_cluster_store_follows_the_model_through_determinate_and_indeterminate_faults() {
        let Some(cluster) = Cluster::start() else {
            return;
        };
        let options = Options::cases(32).with_faults(FaultRates::new(0.15, 0.15));
        model_based::run(&cluster, &driver(), options);
    }
}
