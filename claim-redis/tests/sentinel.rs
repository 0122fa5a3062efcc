//! Sentinel: a store given the sentinels finds the primary, and after the primary is SIGKILLed and a replica promoted it carries on (claims and acks succeed within a bound); a missing master name is refused.

mod common;

use claim_core::store::StoreConfig;
use claim_redis::testing::{MASTER_NAME, SentinelGroup};
use claim_redis::{ConnectError, RedisStore, RedisStoreOptions, Topology};
use std::time::Duration;

const DEADLINE: i64 = 4_000_000_000;

/// Bound on the store working again after the sentinels promoted the replica.
const RECOVERY: Duration = Duration::from_secs(20);

fn options(group: &SentinelGroup, master_name: &str) -> RedisStoreOptions {
    RedisStoreOptions {
        key_prefix: claim_redis::testing::random_prefix(),
        call_timeout: Duration::from_secs(2),
        topology: Topology::Sentinel {
            sentinels: group.other_sentinels(),
            master_name: master_name.to_owned(),
        },
        ..RedisStoreOptions::new(group.url(), StoreConfig::default())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_primary_is_sigkilled_the_store_claims_and_acks_on_the_promoted_replica() {
    if common::redis_server_missing() {
        return;
    }
    let mut group = tokio::task::spawn_blocking(SentinelGroup::start)
        .await
        .unwrap()
        .expect("start a Sentinel group");
    let over = "through the sentinels, before the failover";
    let store = common::round::connected(options(&group, MASTER_NAME), "before", over).await;
    let old = group.primary_port().unwrap();

    let (group, new) = tokio::task::spawn_blocking(move || {
        let new = group.kill_primary();
        (group, new)
    })
    .await
    .unwrap();
    let new = new.expect("the sentinels promote the replica");
    assert_ne!(old, new);

    // Calls may fail while the pool drops its dead connections; each
    // failure is transient, and within the bound one round trip succeeds.
    common::round::until_one_succeeds(&store, DEADLINE, RECOVERY).await;
    drop(group);
}

#[tokio::test]
async fn a_sentinel_topology_without_a_master_name_is_refused_naming_the_field() {
    let options = RedisStoreOptions {
        topology: Topology::Sentinel {
            sentinels: vec![],
            master_name: String::new(),
        },
        ..RedisStoreOptions::new("redis://127.0.0.1:1", StoreConfig::default())
    };
    let err = RedisStore::connect(options)
        .await
        .expect_err("no master name");
    assert!(
        matches!(
            err,
            ConnectError::Topology {
                field: "master_name",
                ..
            }
        ),
        "{err}"
    );
}
