//! Result lists with stray braces on a real Redis Cluster: every marker hashes to its list's slot as `CLUSTER KEYSLOT` answers, records to such lists land, and one member's failing list never stops a queue's reclaim scan.

mod common;

use claim_core::store::{AckItem, ClaimRequest, StoreConfig, Submission};
use claim_core::{
    ClaimInspect, ClaimProducer, ClaimStore, Clock, Generation, ManualClock, OwnerToken,
};
use claim_redis::keys::Keys;
use claim_redis::slots::hash_slot;
use claim_redis::testing::RedisCluster;
use claim_redis::{KeyLayout, RedisStore, RedisStoreOptions, TimeSource};
use std::sync::Arc;
use std::time::Duration;

const Q: &str = "q";
const RESULTS: &str = "results";

/// Names whose own hash tag cannot sit between braces, and other odd ones.
const NASTY: [&str; 12] = [
    "a}b", "{}x", "x{y", "}{", "{a}}", "{}{a}", "{", "}", "{{}}", "}}{{", "x{}y{z}", "{t}.r",
];

/// A store on `cluster` at [`common::T0`] (manual clock) with `config`.
async fn store_on(
    cluster: &RedisCluster,
    config: StoreConfig,
    timeout: Duration,
) -> (RedisStore, Arc<ManualClock>) {
    let clock = ManualClock::new(common::T0);
    let options = RedisStoreOptions {
        call_timeout: timeout,
        time: TimeSource::Clock(clock.clone() as Arc<dyn Clock>),
        ..common::cluster::options(cluster, config)
    };
    (RedisStore::connect(options).await.expect("connect"), clock)
}

/// `id` naming `list` as a producer that resolved its routing.
fn submission(id: &str, list: &str) -> Submission {
    common::routed_submission(Q, id, list)
}

async fn claim(store: &RedisStore, owner: &str, subs: &[&Submission]) {
    let requests: Vec<ClaimRequest> = subs.iter().map(|s| s.claim_request()).collect();
    let out = store.claim(OwnerToken::new(owner).on(Q), &requests).await;
    assert_eq!(out.unwrap().len(), subs.len());
}

#[test]
fn every_marker_hashes_to_its_lists_slot_as_the_clusters_keyslot_answers() {
    let Some(cluster) = common::cluster::shared() else {
        return;
    };
    let keys = Keys::with_layout("", "retry-sortedset", KeyLayout::HashTagged);
    let g = Generation::new("i{d}", "}t{");
    for list in NASTY.into_iter().chain(["result-list"]) {
        let list_key = keys.list(list);
        let marker = keys.marker_for(&list_key, &g);
        let slot = cluster.key_slot(&list_key).unwrap();
        assert_eq!(hash_slot(list_key.as_bytes()), slot, "{list_key:?}");
        assert_eq!(
            cluster.key_slot(&marker).unwrap(),
            slot,
            "{marker:?} for {list_key:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acks_and_delivery_limit_records_to_lists_with_stray_braces_land_and_the_reclaim_scan_goes_on()
 {
    let Some(cluster) = common::cluster::shared() else {
        return;
    };
    let config = StoreConfig {
        max_deliveries: 2,
        default_result_list: RESULTS.into(),
        ..common::config()
    };
    let (store, clock) = store_on(cluster, config, Duration::from_secs(10)).await;
    // Acked to `{}x`: one record there.
    let acked = submission("acked", "{}x");
    store.submit(Q, &acked).await.unwrap();
    claim(&store, "w", &[&acked]).await;
    let item = AckItem {
        generation: acked.generation.clone(),
        member: acked.member.clone(),
        score: acked.score(),
        result_list: "{}x".into(),
        record: claim_core::Record::from(r#"{"id":"acked","payload":"ok"}"#),
        payload_ref: None,
        result_ttl_seconds: 0,
    };
    let out = store
        .ack(OwnerToken::new("w").on(Q), &[item])
        .await
        .unwrap();
    assert!(out[0].pushed && out[0].claim_dropped, "{out:?}");
    assert_eq!(store.list_len("{}x").await.unwrap(), 1);

    // A poison head entry at its delivery limit naming `a}b`, behind it
    // ordinary expired claims: the first lapse puts the poison back once.
    let poison = submission("poison", "a}b");
    store.submit(Q, &poison).await.unwrap();
    claim(&store, "crasher", &[&poison]).await;
    clock.set(common::T0.plus(31_000));
    assert_eq!(store.reclaim_expired(Q, 100).await.unwrap().redelivered, 1);
    let ordinary: Vec<Submission> = (0..3)
        .map(|i| submission(&format!("ok-{i}"), RESULTS))
        .collect();
    for s in &ordinary {
        store.submit(Q, s).await.unwrap();
    }
    let mut all: Vec<&Submission> = vec![&poison];
    all.extend(&ordinary);
    claim(&store, "crasher", &all).await;
    clock.set(common::T0.plus(62_000));
    let report = store
        .reclaim_expired(Q, 100)
        .await
        .expect("no member's list stops the scan");
    assert_eq!(
        (report.redelivered, report.dead_lettered),
        (3, 1),
        "{report:?}"
    );
    assert_eq!(
        store.list_len("a}b").await.unwrap(),
        1,
        "its DELIVERY_LIMIT record"
    );
    assert_eq!(store.depths(Q).await.unwrap().pending, 3);
}
