//! A cluster node that hangs (SIGSTOP) or refuses writes for a while (NOREPLICAS): a client that stops answering (every call times out, none answered between) is replaced by a new connection, and the producer-key deletes an ack could not make meanwhile are sent again until they land.

mod common;

use claim_core::store::{AckItem, ClaimOutcome, ClaimRequest, StoreConfig};
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, OwnerToken};
use claim_redis::testing::RedisCluster;
use claim_redis::{RedisStore, RedisStoreOptions};
use std::time::{Duration, Instant};

const DEADLINE: i64 = 4_000_000_000;

/// A private cluster of three primaries without replicas (a stopped
/// primary is not failed over, it only hangs) and a store on it with a
/// short call timeout; `None` when `redis-server` is missing outside CI.
async fn hung_node_rig() -> Option<(RedisCluster, RedisStore)> {
    let cluster = common::cluster::private(0).await?;
    let options = RedisStoreOptions {
        call_timeout: Duration::from_millis(300),
        ..common::cluster::options(&cluster, StoreConfig::default())
    };
    let store = RedisStore::connect(options).await.expect("connect");
    Some((cluster, store))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_three_timeouts_in_a_row_the_cluster_client_is_replaced_and_calls_succeed_again() {
    let Some((cluster, store)) = hung_node_rig().await else {
        return;
    };
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn producer_keys_an_ack_could_not_delete_while_their_node_refused_writes_are_deleted_once_it_takes_them()
 {
    let Some((cluster, store)) = hung_node_rig().await else {
        return;
    };
    let keys = store.keys().clone();
    let primary_of = |key: &str| {
        cluster
            .primary_of_slot(cluster.key_slot(key).unwrap())
            .unwrap()
    };
    let busy = [
        primary_of(&keys.queue("q").pending),
        primary_of(&keys.list("{q}results")),
    ];
    // A request whose active key lives on a primary the ack's own scripts
    // (queue's slot, list's slot) do not run on.
    let (id, key_primary) = (0..100)
        .map(|i| format!("r{i}"))
        .find_map(|id| {
            let port = primary_of(&keys.active(&id));
            (!busy.contains(&port)).then_some((id, port))
        })
        .expect("an id on a third primary");
    let s = common::submission(&id, "t", DEADLINE);
    store.submit("q", &s).await.expect("submit");
    let owner = OwnerToken::new("w1");
    let req = ClaimRequest {
        member: s.member.clone(),
        generation: s.generation.clone(),
    };
    let claimed = store
        .claim(owner.on("q"), std::slice::from_ref(&req))
        .await
        .unwrap();
    let ClaimOutcome::Claimed { score, .. } = claimed[0] else {
        panic!("not claimed: {:?}", claimed[0]);
    };

    // The active key's primary refuses writes for now (NOREPLICAS, as in a
    // failover's window); the ack's own script runs on the queue's primary.
    let mut raw = common::raw(&format!("redis://127.0.0.1:{key_primary}")).await;
    let min_replicas = |n: u32| {
        redis::cmd("CONFIG")
            .arg("SET")
            .arg("min-replicas-to-write")
            .arg(n)
            .to_owned()
    };
    let _: () = min_replicas(1).query_async(&mut raw).await.unwrap();
    let item = AckItem {
        generation: s.generation.clone(),
        member: s.member.clone(),
        score,
        result_list: "{q}results".to_owned(),
        record: claim_core::Record::from(format!(r#"{{"id":"{id}"}}"#).into_bytes()),
        payload_ref: None,
        result_ttl_seconds: 0,
    };
    let acked = store.ack(owner.on("q"), &[item]).await.expect("ack");
    assert!(acked[0].pushed && acked[0].claim_dropped, "{:?}", acked[0]);
    let active = keys.active(&id);
    let exists = |raw: &mut redis::aio::MultiplexedConnection| {
        let mut raw = raw.clone();
        let cmd = redis::cmd("EXISTS").arg(&active).to_owned();
        async move { cmd.query_async::<bool>(&mut raw).await.unwrap() }
    };
    assert!(exists(&mut raw).await, "the refused delete left the key");
    let _: () = min_replicas(0).query_async(&mut raw).await.unwrap();

    let started = Instant::now();
    while exists(&mut raw).await {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{active} still there 20 s after its node took writes again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(cluster);
}
