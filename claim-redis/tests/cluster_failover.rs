//! Redis Cluster failover: the primary of the queue's slot is SIGKILLed; calls fail transiently (never a panic or a hang), then succeed once its replica is promoted; the promoted node runs the scripts even after its script cache is flushed (NOSCRIPT healed).

mod common;

use claim_core::store::StoreConfig;
use claim_redis::{RedisStore, RedisStoreOptions};
use std::time::Duration;

const DEADLINE: i64 = 4_000_000_000;

/// Bound on the store working again after the kill (promotion included).
const RECOVERY: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_primary_fails_calls_transiently_until_its_replica_is_promoted_and_runs_the_scripts()
 {
    let Some(cluster) = common::cluster::private(1).await else {
        return;
    };
    let options = RedisStoreOptions {
        call_timeout: Duration::from_secs(2),
        ..common::cluster::options(&cluster, StoreConfig::default())
    };
    let store = RedisStore::connect(options).await.expect("connect");
    common::round::round_trip(&store, "q", "results", "before", DEADLINE)
        .await
        .expect("the protocol before the kill");

    let pending = store.keys().queue("q").pending;
    let slot = cluster.key_slot(&pending).unwrap();
    let old = cluster.primary_of_slot(slot).unwrap();
    let (cluster, killed) = tokio::task::spawn_blocking(move || {
        let mut cluster = cluster;
        let killed = cluster.kill_primary_now(old);
        (cluster, killed)
    })
    .await
    .unwrap();
    killed.expect("kill the queue's primary");

    let failures = common::round::until_one_succeeds(&store, DEADLINE, RECOVERY).await;
    assert!(failures > 0, "the kill should fail at least one call");
    let (cluster, new) = tokio::task::spawn_blocking(move || {
        let new = cluster.wait_promoted(slot, old);
        (cluster, new)
    })
    .await
    .unwrap();
    let new = new.expect("the replica was promoted");
    assert_ne!(new, old);

    // The promoted node loses its scripts: the next calls load them again.
    let mut raw = common::raw(&format!("redis://127.0.0.1:{new}")).await;
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut raw)
        .await
        .unwrap();
    common::round::round_trip(&store, "q", "results", "after-flush", DEADLINE)
        .await
        .expect("NOSCRIPT on the promoted node is healed");
    drop(cluster);
}
