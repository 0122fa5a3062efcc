//! A cluster client that stops answering (every call times out, none answered in between) is replaced by a new connection, and calls succeed again once the cluster answers.

mod common;

use claim_core::ClaimInspect;
use claim_core::store::StoreConfig;
use claim_redis::testing::{RedisCluster, require_redis_server};
use claim_redis::{RedisStore, RedisStoreOptions, Topology};
use std::time::{Duration, Instant};

const DEADLINE: i64 = 4_000_000_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_three_timeouts_in_a_row_the_cluster_client_is_replaced_and_calls_succeed_again() {
    if require_redis_server().is_none() {
        eprintln!("skipped: redis-server not on PATH");
        return;
    }
    // No replicas: a stopped primary is not failed over, it only hangs.
    let cluster = tokio::task::spawn_blocking(|| RedisCluster::start_with_replicas(0))
        .await
        .unwrap()
        .expect("start a private cluster");
    let options = RedisStoreOptions {
        key_prefix: claim_redis::testing::random_prefix(),
        call_timeout: Duration::from_millis(300),
        topology: Topology::Cluster {
            seeds: cluster.seeds(),
        },
        ..RedisStoreOptions::new(cluster.url(), StoreConfig::default())
    };
    let store = RedisStore::connect(options).await.expect("connect");
    common::round::round_trip(&store, "q", "{q}results", "before", DEADLINE)
        .await
        .expect("a round trip on the healthy cluster");
    assert_eq!(store.cluster_client_rebuilds(), 0);

    let pending = store.keys().queue("q").pending;
    let slot = cluster.key_slot(&pending).unwrap();
    let port = cluster.primary_of_slot(slot).unwrap();
    cluster
        .signal_node(port, "STOP")
        .expect("SIGSTOP the queue's primary");
    for i in 0..3 {
        let err = store
            .claims("q")
            .await
            .expect_err("a hung primary answers nothing");
        assert!(err.is_transient(), "call {i}: {err}");
    }
    assert_eq!(
        store.cluster_client_rebuilds(),
        0,
        "replaced only when the next call starts"
    );
    cluster.signal_node(port, "CONT").expect("SIGCONT it");

    // The next call replaces the client; within a bound calls succeed.
    let started = Instant::now();
    loop {
        match store.claims("q").await {
            Ok(_) => break,
            Err(e) => {
                assert!(e.is_transient(), "{e}");
                assert!(
                    started.elapsed() < Duration::from_secs(20),
                    "no answer after the node came back: {e}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    assert_eq!(store.cluster_client_rebuilds(), 1);
    common::round::round_trip(&store, "q", "{q}results", "after", DEADLINE)
        .await
        .expect("a round trip on the new client");
    drop(cluster);
}
