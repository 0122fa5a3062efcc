//! The claim-core conformance suite on the Redis store, each test on its own private redis-server: every check plainly, through faults (2 seeds) and on the server's TIME, and the model-based test.
//!
//! `cargo test -p claim-redis --test conformance -- --list` lists every
//! check (`plain::`, `through_faults::`, `server_time::<check>`); a name
//! filter runs the matching ones. Plain and through-faults stores get a
//! fresh random key prefix and the check's manual clock (explicit time);
//! server-time stores read the server's `TIME`, and run the checks that
//! need no clock of their own, starting at that time. Without
//! `redis-server` on PATH every test is skipped, unless `CI` is set, when
//! they fail.

mod common;

use async_trait::async_trait;
use claim_core::conformance::{StoreFactory, T0};
use claim_core::store::StoreConfig;
use claim_core::{ClaimStore, Clock, ManualClock, Millis};
use claim_redis::testing::{RedisServer, RedisServerOptions};
use claim_redis::{RedisStore, TimeSource};
use std::sync::Arc;
use std::time::Duration;

/// Stores on one private server, each with a fresh key prefix.
struct Redis {
    server: RedisServer,
    /// Stores read the server's clock instead of the check's manual clock.
    server_time: bool,
}

impl Redis {
    /// A private server, or `None` when `redis-server` is missing outside CI.
    fn start() -> Option<Redis> {
        let server = common::server(RedisServerOptions::default())?;
        Some(Redis {
            server,
            server_time: false,
        })
    }

    /// Stores on the server's clock, and what that clock reads now.
    async fn on_server_time() -> Option<(Redis, Millis)> {
        let mut redis = Redis::start()?;
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
        let options = claim_redis::RedisStoreOptions {
            pool_size: 4,
            call_timeout: Duration::from_secs(10),
            ..common::options(&self.server.url(), config, time)
        };
        RedisStore::connect(options)
            .await
            .expect("connect to the test's redis-server")
    }
}

claim_core::conformance_tests! {
    factory: Redis::start(),
    fault_seeds: &[1, 2],
    server_time: Redis::on_server_time().await,
}

/// Random workloads against the claim-core model (32 cases each, more if
/// `PROPTEST_CASES` says so).
mod model_based {
    use super::Redis;
    use claim_core::conformance::model_based::{self, Driver, Options};
    use claim_core::conformance::unreliable::FaultRates;
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
        let Some(redis) = Redis::start() else { return };
        model_based::run(&redis, &driver(), Options::cases(32));
    }

    #[test]
    fn the_redis_store_follows_the_model_through_determinate_and_indeterminate_faults() {
        let Some(redis) = Redis::start() else { return };
        let options = Options::cases(32).with_faults(FaultRates::new(0.15, 0.15));
        model_based::run(&redis, &driver(), options);
    }
}
