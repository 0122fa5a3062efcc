//! Tests of the per-node reads and deletes on the shared test cluster: every key read and deleted in one call per node, refused keys (a stale slot map) read and deleted per slot all the same, keys of another shape refused with nothing touched.

use super::{delete, read};
use crate::conn::SlotMap;
use crate::ops::call::{self, evalsha};
use crate::ops::cluster::request_keys;
use crate::testing::{RedisCluster, random_prefix, require_redis_server};
use crate::{RedisStore, RedisStoreOptions, Topology};
use claim_core::Op;
use claim_core::store::StoreConfig;
use redis::AsyncCommands;
use redis::cluster_async::ClusterConnection;

/// Keys per test: enough to reach every primary many times over.
const KEYS: usize = 60;

/// A store on the shared cluster (server time) and a raw cluster
/// connection; `None` when redis-server is missing outside CI.
async fn rig() -> Option<(RedisStore, ClusterConnection)> {
    require_redis_server()?;
    let cluster = tokio::task::spawn_blocking(RedisCluster::shared)
        .await
        .expect("join")
        .expect("the shared cluster");
    let options = RedisStoreOptions {
        key_prefix: random_prefix(),
        topology: Topology::Cluster {
            seeds: cluster.seeds(),
        },
        ..RedisStoreOptions::new(cluster.url(), StoreConfig::default())
    };
    let store = RedisStore::connect(options).await.expect("connect");
    let seeds: Vec<String> = cluster
        .seeds()
        .iter()
        .map(|s| format!("redis://{s}"))
        .collect();
    let raw = redis::cluster::ClusterClient::new(seeds)
        .expect("client")
        .get_async_connection()
        .await
        .expect("raw connection");
    Some((store, raw))
}

/// `KEYS` active keys holding `token-<i>`, written through `raw`.
async fn active_keys(store: &RedisStore, raw: &mut ClusterConnection) -> Vec<String> {
    let keys: Vec<String> = (0..KEYS)
        .map(|i| store.keys().active(&format!("r{i}")))
        .collect();
    for (i, key) in keys.iter().enumerate() {
        let () = raw
            .set_ex(key, format!("token-{i}"), 600)
            .await
            .expect("SET");
    }
    keys
}

async fn exists(raw: &mut ClusterConnection, key: &str) -> bool {
    raw.exists(key).await.expect("EXISTS")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_call_per_node_reads_every_key_its_value_or_its_type_and_leaves_none_for_the_per_slot_path()
 {
    let Some((store, mut raw)) = rig().await else {
        return;
    };
    let mut keys = active_keys(&store, &mut raw).await;
    let hash = store.keys().cancel("a-hash");
    let () = raw.hset(&hash, "f", "v").await.expect("HSET");
    keys.push(hash);
    keys.push(store.keys().cancel("missing"));
    let got = read(&store, Op::Claim, &keys, true).await.expect("read");
    assert!(
        got.left.is_empty(),
        "keys left for the per-slot path: {:?}",
        got.left
    );
    for i in 0..KEYS {
        assert_eq!(
            got.values[i].as_deref(),
            Some(format!("token-{i}").as_bytes())
        );
        assert_eq!(got.types[i], None);
    }
    assert_eq!(
        (got.values[KEYS].as_deref(), got.types[KEYS].as_deref()),
        (None, Some("hash"))
    );
    assert_eq!(
        (
            got.values[KEYS + 1].as_deref(),
            got.types[KEYS + 1].as_deref()
        ),
        (None, None)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_stale_slot_map_the_refused_keys_are_read_and_deleted_per_slot_and_none_is_missed() {
    let Some((store, mut raw)) = rig().await else {
        return;
    };
    let keys = active_keys(&store, &mut raw).await;
    // Every slot on one node: the other nodes' keys are refused there.
    store.conn().use_slot_map(SlotMap::one_node());
    let got = read(&store, Op::Claim, &keys, false).await.expect("read");
    assert!(
        !got.left.is_empty(),
        "a map placing every key on one node must be refused for some"
    );
    store.conn().use_slot_map(SlotMap::one_node());
    let (values, _) = request_keys::strings(&store, Op::Claim, &keys, false)
        .await
        .expect("read");
    for (i, value) in values.iter().enumerate() {
        assert_eq!(
            value.as_deref(),
            Some(format!("token-{i}").as_bytes()),
            "key {i}"
        );
    }
    store.conn().use_slot_map(SlotMap::one_node());
    let mut targets: Vec<(String, String)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.clone(), format!("token-{i}")))
        .collect();
    // One key holds another generation's token: it stays, on either path.
    targets[0].1 = "a-newer-token".into();
    request_keys::delete(&store, Op::Ack, targets).await;
    assert!(
        exists(&mut raw, &keys[0]).await,
        "a key holding another token is kept"
    );
    for key in &keys[1..] {
        assert!(!exists(&mut raw, key).await, "{key} was not deleted");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_slot_map_deletes_every_key_holding_its_token_in_one_call_per_node() {
    let Some((store, mut raw)) = rig().await else {
        return;
    };
    let keys = active_keys(&store, &mut raw).await;
    let targets: Vec<(String, String)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.clone(), format!("token-{i}")))
        .collect();
    let left = delete(&store, Op::Ack, targets).await;
    assert!(
        left.refused.is_empty() && left.failed.is_empty(),
        "left for the per-slot path: {:?} {:?}",
        left.refused,
        left.failed
    );
    for key in &keys {
        assert!(!exists(&mut raw, key).await, "{key} was not deleted");
    }
}

/// Sends node_del_if.lua or node_get.lua with `args` after the routing
/// key, `args[first]` (the first key).
async fn send(
    store: &RedisStore,
    script: &redis::Script,
    first: usize,
    args: &[&str],
) -> Result<redis::Value, claim_core::StoreError> {
    let mut cmd = evalsha(script, 1, args.len(), 256);
    cmd.arg(args[first]);
    for a in args {
        cmd.arg(*a);
    }
    call::run(store, Op::Ack, script, &cmd).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_node_call_naming_a_key_of_another_shape_is_refused_whole_and_touches_nothing() {
    let Some((store, mut raw)) = rig().await else {
        return;
    };
    let prefix = store.keys().prefix().to_string();
    let active = store.keys().active("shape");
    let pending = store.keys().queue("q").pending;
    let other_tenant = format!("other:{}", active.trim_start_matches(&prefix));
    let () = raw.set(&active, "t").await.expect("SET");
    let () = raw.set(&pending, "t").await.expect("SET");
    let () = raw.set(&other_tenant, "t").await.expect("SET");
    let del = &store.scripts().node_del_if;
    for wrong in [&pending, &other_tenant, &format!("{prefix}request-active:")] {
        let err = send(&store, del, 1, &[&prefix, &active, "t", wrong, "t"])
            .await
            .unwrap_err();
        assert!(err.to_string().contains("not a per-request key"), "{err}");
    }
    // A producer key is never deleted without a token to compare.
    let err = send(&store, del, 1, &[&prefix, &active, ""])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no token to compare"), "{err}");
    for key in [&active, &pending, &other_tenant] {
        assert!(exists(&mut raw, key).await, "{key} was touched");
    }
    let get = &store.scripts().node_get;
    let err = send(&store, get, 3, &[&prefix, "0", "2", &active, &pending])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not a per-request key"), "{err}");
}
