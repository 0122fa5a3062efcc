//! An operator's writes: `dead_letter` (`lua/dead_letter.lua`), `redrive_dead` (`lua/redrive_dead.lua`), `purge_dead` (`lua/purge_dead.lua`); and `is_terminal`, which a redrive asks: a generation's markers, in the hash-tagged layout looked for in every slot they may lie in (each configured list's, each configured queue's copy), then by SCAN on every primary.

use super::call::Call;
use super::cluster::request_keys;
use crate::codec::{dead_json, flag, per_item, score_arg};
use crate::conn::{Effect, SlotMap};
use crate::keys::{GenerationKey, KeyLayout, MARKER_PREFIX};
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::admin::Redrive;
use claim_core::{Generation, Member, Op, StoreError, wire};
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};

/// Moves one pending member to the dead hash with its reason
/// (`lua/dead_letter.lua`).
pub(crate) async fn dead_letter(
    store: &RedisStore,
    queue: &str,
    member: &Member,
    reason: &str,
) -> Result<bool, StoreError> {
    let now = store.now_ms(Op::DeadLetter).await?;
    let q = store.keys().queue(queue);
    let mut call = Call::new(store, &store.scripts().dead_letter);
    call.key(&q.pending).key(&q.dead);
    call.arg(member.as_bytes()).arg(dead_json(reason, now));
    let moved = flag(call.run(store, Op::DeadLetter).await?);
    if moved {
        tracing::debug!(queue, "member dead-lettered");
    }
    Ok(moved)
}

/// Sorts out unparsable and answered entries ([`is_terminal`]), then runs
/// `lua/redrive_dead.lua` for the rest, one call per [`MAX_BATCH`] members.
pub(crate) async fn redrive_dead(
    store: &RedisStore,
    queue: &str,
    members: &[Member],
) -> Result<Vec<Redrive>, StoreError> {
    if members.is_empty() {
        return Ok(Vec::new());
    }
    let q = store.keys().queue(queue);
    let mut out = vec![Redrive::NotDead; members.len()];
    // (index, member, score text, generation) of the parsable entries.
    let mut parsable = Vec::new();
    for (i, member) in members.iter().enumerate() {
        match wire::parse_member(member.as_bytes()) {
            Ok(p) => parsable.push((i, member, p.score(), Generation::new(p.id, p.token))),
            Err(_) => out[i] = Redrive::Unparsable,
        }
    }
    // Answered generations stay (see the script's header for why this read
    // cannot go stale).
    let gens: Vec<&Generation> = parsable.iter().map(|(.., g)| g).collect();
    let answered = answered(store, &gens).await?;
    let mut movable = Vec::new();
    for ((i, member, score, g), answered) in parsable.into_iter().zip(answered) {
        if answered {
            out[i] = Redrive::Answered;
        } else {
            movable.push((i, member, score_arg(score), g.claim_key()));
        }
    }
    // An entry sorted out above that is not dead answers NotDead, as the model.
    // Whether the dead hash holds each member (`HEXISTS`, pipelined).
    let mut pipe = redis::pipe();
    for m in members {
        pipe.hexists(&q.dead, m.as_bytes());
    }
    let dead: Vec<bool> = store
        .conn()
        .query(Op::RedriveDead, Effect::Read, &pipe)
        .await?;
    for (i, d) in dead.into_iter().enumerate() {
        if !d {
            out[i] = Redrive::NotDead;
        }
    }
    for chunk in movable.chunks(MAX_BATCH) {
        let mut call = Call::new(store, &store.scripts().redrive_dead);
        call.key(&q.pending).key(&q.dead).key(&q.deliveries);
        for (_, member, score, claim_key) in chunk {
            call.arg(member.as_bytes()).arg(score).arg(claim_key);
        }
        let reply: Vec<i64> = call.run(store, Op::RedriveDead).await?;
        let moved = per_item(Op::RedriveDead, reply, chunk.len())?;
        for ((i, ..), moved) in chunk.iter().zip(moved) {
            out[*i] = if flag(moved) {
                Redrive::Moved
            } else {
                Redrive::NotDead
            };
        }
    }
    let moved = out.iter().filter(|o| **o == Redrive::Moved).count();
    tracing::info!(queue, moved, asked = members.len(), "dead entries redriven");
    Ok(out)
}

/// For each generation, whether its terminal marker is live: `is_terminal`
/// each, so a redrive reads markers wherever the key layout keeps them (an
/// operator's command; its round trips do not matter).
async fn answered(store: &RedisStore, gens: &[&Generation]) -> Result<Vec<bool>, StoreError> {
    let mut out = Vec::with_capacity(gens.len());
    for g in gens {
        out.push(is_terminal(store, g).await?);
    }
    Ok(out)
}

/// Deletes dead entries of one queue (`lua/purge_dead.lua`), one call per
/// [`MAX_BATCH`] members.
pub(crate) async fn purge_dead(
    store: &RedisStore,
    queue: &str,
    members: &[Member],
) -> Result<Vec<bool>, StoreError> {
    let q = store.keys().queue(queue);
    let mut out = Vec::with_capacity(members.len());
    for chunk in members.chunks(MAX_BATCH) {
        let mut call = Call::new(store, &store.scripts().purge_dead);
        call.key(&q.dead);
        for m in chunk {
            call.arg(m.as_bytes());
        }
        let reply: Vec<i64> = call.run(store, Op::PurgeDead).await?;
        out.extend(
            per_item(Op::PurgeDead, reply, chunk.len())?
                .into_iter()
                .map(flag),
        );
    }
    let purged = out.iter().filter(|p| **p).count();
    tracing::info!(queue, purged, "dead entries purged");
    Ok(out)
}

/// Whether a generation's terminal marker is live: plain, one GET. A
/// marker holds its logical expiry; with server time Redis's own
/// expiry already agrees with it, so existence is enough.
pub(crate) async fn is_terminal(
    store: &RedisStore,
    generation: &Generation,
) -> Result<bool, StoreError> {
    if store.layout() == KeyLayout::HashTagged {
        return tagged_is_terminal(store, generation).await;
    }
    let cmd = redis::Cmd::get(store.keys().marker(generation));
    let value: Option<String> = store
        .conn()
        .query(Op::IsTerminal, Effect::Read, &cmd)
        .await?;
    Ok(value.is_some_and(|v| store.is_live_marker(&v)))
}

/// Hash-tagged layout: a marker lies in its result list's slot, and the
/// generation alone does not name the list, so the markers for every list
/// the configuration names (the default list and each queue's) and the
/// ack's queue-slot copies for every queue it names are read, per slot;
/// any live one answers.
async fn tagged_is_terminal(
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
        Some(_) => primary_slots(store).await?.into_iter().map(Some).collect(),
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

/// One slot of each primary of the cluster (from `CLUSTER SLOTS`, read
/// fresh), to route a keyless command to every primary once.
async fn primary_slots(store: &RedisStore) -> Result<Vec<u16>, StoreError> {
    let cmd = redis::cmd("CLUSTER").arg("SLOTS").to_owned();
    let reply: redis::Value = store
        .conn()
        .query(Op::IsTerminal, Effect::Read, &cmd)
        .await?;
    let map = SlotMap::parse(&reply).ok_or_else(|| {
        crate::conn::bad_reply(Op::IsTerminal, Effect::Read, "CLUSTER SLOTS is no slot map")
    })?;
    Ok(map.first_slots())
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
