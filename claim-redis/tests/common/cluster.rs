//! Redis Clusters for the topology tests (a private one, or the shared one), or a skip, and store options on one.

use claim_core::store::StoreConfig;
use claim_redis::testing::{RedisCluster, random_prefix};
use claim_redis::{RedisStoreOptions, Topology};

/// A private cluster of three primaries with `replicas` replicas each, or
/// `None` (after printing why) as [`super::server`].
pub async fn private(replicas: usize) -> Option<RedisCluster> {
    if super::redis_server_missing() {
        return None;
    }
    let cluster = tokio::task::spawn_blocking(move || RedisCluster::start_with_replicas(replicas))
        .await
        .unwrap()
        .expect("start a private cluster");
    Some(cluster)
}

/// The cluster the tests of one binary share, or `None` as [`private`].
pub fn shared() -> Option<&'static RedisCluster> {
    if super::redis_server_missing() {
        return None;
    }
    Some(RedisCluster::shared().expect("start the shared test cluster"))
}

/// Options for a store on `cluster` with `config`: a random prefix and
/// the cluster's nodes as seeds; the rest as [`RedisStoreOptions::new`].
pub fn options(cluster: &RedisCluster, config: StoreConfig) -> RedisStoreOptions {
    RedisStoreOptions {
        key_prefix: random_prefix(),
        topology: Topology::Cluster {
            seeds: cluster.seeds(),
        },
        ..RedisStoreOptions::new(cluster.url(), config)
    }
}
