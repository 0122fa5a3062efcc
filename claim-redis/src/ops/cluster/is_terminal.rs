//! `is_terminal` in the hash-tagged layout: a generation's markers looked for in every slot they may lie in (each configured list's, each configured queue's copy), then by SCAN on every primary.

use super::request_keys;
use crate::conn::Effect;
use crate::keys::{GenerationKey, MARKER_PREFIX};
use crate::state::RedisStore;
use claim_core::{Generation, Op, StoreError};
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};

/// A marker lies in its result list's slot, and the
/// generation alone does not name the list, so the markers for every list
/// the configuration names (the default list and each queue's) and the
/// ack's queue-slot copies for every queue it names are read, per slot;
/// any live one answers.
pub(crate) async fn is_terminal(
    store: &RedisStore,
    generation: &Generation,
) -> Result<bool, StoreError> {
    let keys = store.keys();
    let config = &store.inner.config;
    let mut lists: Vec<&str> = vec![&config.default_result_list];
    lists.extend(config.queue_result_lists.values().map(String::as_str));
    lists.sort_unstable();
    lists.dedup();
    let mut markers: Vec<String> = lists
        .iter()
        .map(|list| keys.marker_for(&keys.list(list), generation))
        .collect();
    // The ack's copy in the queue's slot, for every queue the configuration
    // names: it finds a record pushed to a member's own list, which the
    // configuration does not name, without the SCAN below (which on a
    // cluster reaches one node only).
    let mut queues: Vec<&str> = vec![&config.default_queue];
    queues.extend(config.queue_result_lists.keys().map(String::as_str));
    queues.sort_unstable();
    queues.dedup();
    markers.extend(
        queues
            .iter()
            .map(|queue| keys.marker_for(&keys.queue(queue).pending, generation)),
    );
    let values = request_keys::mget(store, Op::IsTerminal, &markers).await?;
    if any_live(store, &values) {
        return Ok(true);
    }
    scan_markers(store, generation).await
}

/// Whether any of the marker values read is live.
fn any_live(store: &RedisStore, values: &[Option<Vec<u8>>]) -> bool {
    values
        .iter()
        .flatten()
        .any(|v| store.is_live_marker(&String::from_utf8_lossy(v)))
}

/// The generation's markers on lists the configuration does not name (a
/// member's own list), found by `SCAN … MATCH` over the keyspace: slow,
/// but `is_terminal` is an inspection (tests, reconciling an unknown
/// outcome), never on the hot path. On a cluster it covers the node the
/// client sends the SCAN to.
async fn scan_markers(store: &RedisStore, generation: &Generation) -> Result<bool, StoreError> {
    let keys = store.keys();
    let glob = |s: &str| {
        s.chars().fold(String::new(), |mut out, c| {
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                out.push('\\');
            }
            out.push(c);
            out
        })
    };
    let pattern = format!(
        "{}{{*}}:{}",
        glob(&format!("{}{MARKER_PREFIX}", keys.prefix())),
        glob(&GenerationKey(generation).to_string())
    );
    // On a cluster each primary holds its own keys: scan every one.
    let nodes = match store.conn().cluster() {
        Some(cluster) => primary_slots(store, &cluster)
            .await?
            .into_iter()
            .map(Some)
            .collect(),
        None => vec![None],
    };
    for node in nodes {
        let mut cursor = 0u64;
        loop {
            let mut scan = redis::cmd("SCAN");
            scan.arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000);
            let (next, found): (u64, Vec<String>) = match node {
                None => {
                    store
                        .conn()
                        .query(Op::IsTerminal, Effect::Read, &scan)
                        .await?
                }
                Some(slot) => on_primary(store, slot, scan).await?,
            };
            if !found.is_empty() {
                let values = request_keys::mget(store, Op::IsTerminal, &found).await?;
                if any_live(store, &values) {
                    return Ok(true);
                }
            }
            if next == 0 {
                break;
            }
            cursor = next;
        }
    }
    Ok(false)
}

/// One slot of each primary of the cluster (from `CLUSTER SLOTS`), to route
/// a keyless command to every primary once.
async fn primary_slots(
    store: &RedisStore,
    cluster: &redis::cluster_async::ClusterConnection,
) -> Result<Vec<u16>, StoreError> {
    use redis::Value;
    let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::RandomPrimary);
    let mut cluster = cluster.clone();
    let reply = tokio::time::timeout(
        store.conn().timeout(),
        cluster.route_command(redis::cmd("CLUSTER").arg("SLOTS").to_owned(), route),
    )
    .await
    .map_err(|_| StoreError::failed(Op::IsTerminal, "CLUSTER SLOTS: no answer in time"))?
    .map_err(|e| crate::conn::classify(Op::IsTerminal, Effect::Read, &e))?;
    let bad = |what: &str| crate::conn::bad_reply(Op::IsTerminal, Effect::Read, what);
    let Value::Array(ranges) = reply else {
        return Err(bad("CLUSTER SLOTS is not an array"));
    };
    let mut seen = std::collections::BTreeMap::new();
    for range in ranges {
        let Value::Array(parts) = range else {
            return Err(bad("a CLUSTER SLOTS range is not an array"));
        };
        let (Some(Value::Int(start)), Some(Value::Array(primary))) = (parts.first(), parts.get(2))
        else {
            return Err(bad("a CLUSTER SLOTS range has no start or primary"));
        };
        let address = format!("{:?}", primary.iter().take(2).collect::<Vec<_>>());
        let slot = u16::try_from(*start).map_err(|_| bad("a slot out of range"))?;
        seen.entry(address).or_insert(slot);
    }
    Ok(seen.into_values().collect())
}

/// Runs a keyless read on the primary serving `slot`.
async fn on_primary<T: redis::FromRedisValue>(
    store: &RedisStore,
    slot: u16,
    cmd: redis::Cmd,
) -> Result<T, StoreError> {
    let Some(cluster) = store.conn().cluster() else {
        return Err(StoreError::failed(Op::IsTerminal, "not a cluster"));
    };
    let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(Route::new(
        slot,
        SlotAddr::Master,
    )));
    let mut cluster = cluster.clone();
    let reply = tokio::time::timeout(store.conn().timeout(), cluster.route_command(cmd, route))
        .await
        .map_err(|_| StoreError::failed(Op::IsTerminal, "SCAN: no answer in time"))?
        .map_err(|e| crate::conn::classify(Op::IsTerminal, Effect::Read, &e))?;
    redis::from_redis_value(reply)
        .map_err(|e| crate::conn::bad_reply(Op::IsTerminal, Effect::Read, e))
}
