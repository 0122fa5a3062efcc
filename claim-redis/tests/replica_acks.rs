//! `replica_acks`: claims and acks WAIT for replicas; on a cluster with one replica per primary nothing falls short, and on a server without replicas every WAIT falls short, is counted, and the calls still succeed.

mod common;

use claim_core::store::StoreConfig;
use claim_redis::testing::RedisServerOptions;
use claim_redis::{RedisStore, RedisStoreOptions};
use std::time::Duration;

const DEADLINE: i64 = 4_000_000_000;

#[tokio::test]
async fn on_a_cluster_each_claim_and_ack_waits_for_one_replica_without_shortfall() {
    let Some(cluster) = common::cluster::shared() else {
        return;
    };
    let options = RedisStoreOptions {
        replica_acks: 1,
        ..common::cluster::options(cluster, StoreConfig::default())
    };
    let store = RedisStore::connect(options).await.expect("connect");
    // The list in another slot than the queue: the ack waits on both.
    common::round::round_trip(&store, "q", "results", "a", DEADLINE)
        .await
        .unwrap();
    let stats = store.replica_ack_stats();
    assert!(stats.waits >= 2, "{stats:?}");
    assert_eq!(stats.shortfalls, 0, "{stats:?}");
}

#[tokio::test]
async fn without_replicas_a_wait_falls_short_is_counted_and_the_write_still_succeeds() {
    let Some(server) = common::server(RedisServerOptions::default()) else {
        return;
    };
    let options = RedisStoreOptions {
        key_prefix: claim_redis::testing::random_prefix(),
        replica_acks: 1,
        call_timeout: Duration::from_millis(400),
        ..RedisStoreOptions::new(server.url(), StoreConfig::default())
    };
    let store = RedisStore::connect(options).await.expect("connect");
    common::round::round_trip(&store, "q", "results", "a", DEADLINE)
        .await
        .expect("a shortfall is not an error");
    let stats = store.replica_ack_stats();
    assert_eq!((stats.waits, stats.shortfalls), (2, 2), "{stats:?}");
}
