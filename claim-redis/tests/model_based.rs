//! Runs claim-core's model-based property test against the Redis store, plainly and through store faults behind a retrying client (32 cases each, more if `PROPTEST_CASES` says so).

mod common;

use async_trait::async_trait;
use claim_core::conformance::StoreFactory;
use claim_core::conformance::model_based::{self, Driver, Options};
use claim_core::conformance::unreliable::FaultRates;
use claim_core::store::StoreConfig;
use claim_core::{Clock, ManualClock};
use claim_redis::testing::RedisServerOptions;
use claim_redis::{RedisStore, TimeSource};
use std::future::Future;
use std::sync::Arc;

struct Redis {
    url: String,
}

#[async_trait]
impl StoreFactory for Redis {
    type Store = RedisStore;

    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> RedisStore {
        let time = TimeSource::Clock(clock as Arc<dyn Clock>);
        RedisStore::connect(common::options(&self.url, config, time))
            .await
            .expect("connect to the test's redis-server")
    }
}

/// One tokio runtime for every case: the stores' pools live on it.
struct Tokio(tokio::runtime::Runtime);

impl Driver for Tokio {
    fn block_on<Fut: Future>(&self, future: Fut) -> Fut::Output {
        self.0.block_on(future)
    }
}

#[test]
fn the_redis_store_follows_the_model_through_random_workloads_and_drains_to_one_record_per_generation()
 {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    let driver = Tokio(tokio::runtime::Runtime::new().expect("tokio runtime"));
    model_based::run(&Redis { url: server.url() }, &driver, Options::cases(32));
}

#[test]
fn the_redis_store_follows_the_model_through_determinate_and_indeterminate_faults() {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    let driver = Tokio(tokio::runtime::Runtime::new().expect("tokio runtime"));
    let options = Options::cases(32).with_faults(FaultRates::new(0.15, 0.15));
    model_based::run(&Redis { url: server.url() }, &driver, options);
}
