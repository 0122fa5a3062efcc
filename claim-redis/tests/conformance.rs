//! Runs the claim-core conformance suite against the Redis store, on one private redis-server.
//!
//! `cargo test -p claim-redis --test conformance [-- <name filter>]` prints
//! one line per check and a closing `N passed, N failed`, the same checks
//! as the memory store. Each store gets a fresh random key prefix and the
//! suite's manual clock (explicit time). Before that, the checks that need
//! no clock of their own run once more on stores that read the server's
//! `TIME` (lines marked `[server time]`, summed up as `server time: N
//! passed, N failed`). Without `redis-server` on PATH the suite is skipped,
//! unless `CI` is set, when it fails.

use async_trait::async_trait;
use claim_core::ClaimStore;
use claim_core::ManualClock;
use claim_core::conformance::{
    StoreFactory, exit_code, filter_from_args, run_all, run_on_server_time,
};
use claim_core::store::StoreConfig;
use claim_redis::testing::{RedisServer, RedisServerOptions, random_prefix, require_redis_server};
use claim_redis::{RedisStore, RedisStoreOptions, TimeSource};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

struct Redis {
    url: String,
}

/// Stores on the server's own clock: the manual clock is not read.
struct RedisServerTime {
    url: String,
}

#[async_trait]
impl StoreFactory for RedisServerTime {
    type Store = RedisStore;

    async fn make(&self, config: StoreConfig, _clock: Arc<ManualClock>) -> RedisStore {
        let options = RedisStoreOptions {
            key_prefix: random_prefix(),
            pool_size: 4,
            call_timeout: Duration::from_secs(10),
            time: TimeSource::Server,
            ..RedisStoreOptions::new(self.url.clone(), config)
        };
        RedisStore::connect(options)
            .await
            .expect("connect to the suite's redis-server")
    }
}

#[async_trait]
impl StoreFactory for Redis {
    type Store = RedisStore;

    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> RedisStore {
        let options = RedisStoreOptions {
            key_prefix: random_prefix(),
            pool_size: 4,
            call_timeout: Duration::from_secs(10),
            time: TimeSource::Clock(clock),
            ..RedisStoreOptions::new(self.url.clone(), config)
        };
        RedisStore::connect(options)
            .await
            .expect("connect to the suite's redis-server")
    }
}

fn main() -> ExitCode {
    if require_redis_server().is_none() {
        println!("skipped: redis-server not on PATH");
        return ExitCode::SUCCESS;
    }
    let server = RedisServer::start(RedisServerOptions::default()).expect("start redis-server");
    let filter = filter_from_args(std::env::args().skip(1));
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let on_server_time = RedisServerTime { url: server.url() };
    let server_time = runtime.block_on(async {
        let probe = on_server_time
            .make(
                StoreConfig::default(),
                ManualClock::new(claim_core::conformance::T0),
            )
            .await;
        let now = probe.now().await.expect("the server's TIME");
        run_on_server_time(&on_server_time, filter.as_deref(), now).await
    });
    let factory = Redis { url: server.url() };
    let results = runtime.block_on(run_all(&factory, filter.as_deref()));
    drop(server);
    let code = exit_code(&results, filter.as_deref());
    if server_time.iter().any(|r| r.failure.is_some()) {
        ExitCode::FAILURE
    } else {
        code
    }
}
