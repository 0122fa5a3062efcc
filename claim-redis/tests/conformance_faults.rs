//! The conformance suite on the Redis store through determinate and indeterminate faults, behind a retrying client (2 seeds), on a private redis-server.
//!
//! A test of its own: the suite silences the panic hook while it runs.

mod common;

use async_trait::async_trait;
use claim_core::conformance::unreliable::FaultRates;
use claim_core::conformance::{StoreFactory, faults};
use claim_core::store::StoreConfig;
use claim_core::{Clock, ManualClock};
use claim_redis::testing::RedisServerOptions;
use claim_redis::{RedisStore, TimeSource};
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

#[test]
fn the_conformance_suite_passes_on_redis_through_faults_behind_a_retrying_client() {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let factory = Redis { url: server.url() };
    let rates = FaultRates::new(0.2, 0.2);
    let run = runtime.block_on(faults::run_all(&factory, rates, &[1, 2], None));
    let failed: Vec<String> = run
        .results
        .iter()
        .filter_map(|r| r.failure.as_ref().map(|why| format!("{}: {why}", r.name)))
        .collect();
    assert!(
        failed.is_empty(),
        "checks failed through faults:\n{}",
        failed.join("\n")
    );
    assert!(
        run.injected.determinate > 20 && run.injected.indeterminate > 20,
        "too few faults to mean anything: {:?}",
        run.injected
    );
}
