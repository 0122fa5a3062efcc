//! One member's failing result list never stops a queue's reclaim scan (hash-tagged reclaim on a private Redis Cluster without replicas): with the poison's list's primary hung, the ordinary expired claims still come back, and the poison's turn comes once its node answers.

mod common;

use claim_core::store::{ClaimRequest, StoreConfig, Submission};
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, Clock, ManualClock, OwnerToken};
use claim_redis::keys::Keys;
use claim_redis::slots::hash_slot;
use claim_redis::testing::{RedisCluster, random_prefix};
use claim_redis::{KeyLayout, RedisStore, RedisStoreOptions, TimeSource};
use std::sync::Arc;
use std::time::{Duration, Instant};

const Q: &str = "q";

fn submission(id: &str, list: &str) -> Submission {
    common::routed_submission(Q, id, list)
}

async fn claim(store: &RedisStore, subs: &[&Submission]) {
    let requests: Vec<ClaimRequest> = subs.iter().map(|s| s.claim_request()).collect();
    let out = store
        .claim(OwnerToken::new("crasher").on(Q), &requests)
        .await;
    assert_eq!(out.unwrap().len(), subs.len());
}

/// The first `<stem>-<n>` whose key lies on none of the primaries `taken`.
fn name_off(cluster: &RedisCluster, keys: &Keys, stem: &str, taken: &[u16]) -> (String, u16) {
    (0..1000)
        .map(|n| format!("{stem}-{n}"))
        .map(|name| {
            let primary = cluster
                .primary_of_slot(hash_slot(keys.list(&name).as_bytes()))
                .unwrap();
            (name, primary)
        })
        .find(|(_, primary)| !taken.contains(primary))
        .expect("a name on another primary")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poison_claim_whose_lists_node_hangs_leaves_the_ordinary_expired_claims_to_come_back() {
    let Some(cluster) = common::cluster::private(0).await else {
        return;
    };
    let prefix = random_prefix();
    let keys = Keys::with_layout(&prefix, "retry-sortedset", KeyLayout::HashTagged);
    let queue_primary = cluster
        .primary_of_slot(hash_slot(keys.queue(Q).pending.as_bytes()))
        .unwrap();
    let (results, results_primary) = name_off(&cluster, &keys, "results", &[queue_primary]);
    let (poison_list, hung) =
        name_off(&cluster, &keys, "poison", &[queue_primary, results_primary]);
    let clock = ManualClock::new(common::T0);
    let config = StoreConfig {
        max_deliveries: 2,
        default_result_list: results.clone(),
        ..common::config()
    };
    let options = RedisStoreOptions {
        key_prefix: prefix,
        call_timeout: Duration::from_millis(300),
        time: TimeSource::Clock(clock.clone() as Arc<dyn Clock>),
        ..common::cluster::options(&cluster, config)
    };
    let store = RedisStore::connect(options).await.expect("connect");

    // The poison lapses once (back to pending), then is claimed again with
    // three ordinary requests, and all four lapse: the poison at its limit.
    let poison = submission("poison", &poison_list);
    store.submit(Q, &poison).await.unwrap();
    claim(&store, &[&poison]).await;
    clock.set(common::T0.plus(31_000));
    assert_eq!(store.reclaim_expired(Q, 100).await.unwrap().redelivered, 1);
    let ordinary: Vec<Submission> = (0..3)
        .map(|i| submission(&format!("ok-{i}"), &results))
        .collect();
    let mut all: Vec<&Submission> = vec![&poison];
    for s in &ordinary {
        store.submit(Q, s).await.unwrap();
        all.push(s);
    }
    claim(&store, &all).await;
    clock.set(common::T0.plus(62_000));

    cluster
        .signal_node(hung, "STOP")
        .expect("SIGSTOP the poison list's primary");
    let report = store.reclaim_expired(Q, 100).await;
    cluster.signal_node(hung, "CONT").expect("SIGCONT it");
    let report = report.expect("the poison's hung list does not fail the scan");
    assert_eq!(
        (report.redelivered, report.dead_lettered),
        (3, 0),
        "{report:?}"
    );
    let depths = store.depths(Q).await.unwrap();
    assert_eq!((depths.pending, depths.claimed), (3, 1), "the poison waits");

    // Once its node answers, a later pass gives the poison its record.
    let started = Instant::now();
    loop {
        match store.reclaim_expired(Q, 100).await {
            Ok(r) if r.dead_lettered == 1 => break,
            Ok(r) => panic!("the poison was not dead-lettered: {r:?}"),
            Err(e) => assert!(
                e.is_transient() && started.elapsed() < Duration::from_secs(20),
                "{e}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(store.list_len(&poison_list).await.unwrap(), 1);
    assert_eq!(store.depths(Q).await.unwrap().claimed, 0);
}
