//! The read-only inspections longer than one command (the others are in `mod.rs`): `retry_entries`, `claims`, and the sizes `depths` and the index repair read.

use super::call::check_keys;
use super::retries::retry_sets;
use crate::codec::{parse_owner, pending_entries};
use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::store::{ClaimInfo, PendingEntry};
use claim_core::{Generation, Member, Millis, Op, OwnerToken, Score, StoreError, wire};
use std::collections::HashMap;

/// The sizes of a sorted set and of two hashes, read in one MULTI.
pub(crate) async fn sizes(
    store: &RedisStore,
    op: Op,
    zset: &str,
    hashes: [&str; 2],
) -> Result<(usize, usize, usize), StoreError> {
    check_keys(
        store,
        op,
        "MULTI of ZCARD and HLENs",
        &[zset, hashes[0], hashes[1]],
    )?;
    let pipe = redis::pipe()
        .atomic()
        .zcard(zset)
        .hlen(hashes[0])
        .hlen(hashes[1])
        .to_owned();
    store.conn().query(op, Effect::Read, &pipe).await
}

/// A ZRANGE of each whole retry set ([`retry_sets`]), earliest due first.
pub(crate) async fn retry_entries(store: &RedisStore) -> Result<Vec<PendingEntry>, StoreError> {
    let sets = retry_sets(store, Op::RetryEntries).await?;
    let mut pipe = redis::pipe();
    for (_, set) in &sets {
        pipe.cmd("ZRANGE").arg(set).arg(0).arg(-1).arg("WITHSCORES");
    }
    let per_set: Vec<Vec<(Vec<u8>, f64)>> = store
        .conn()
        .query(Op::RetryEntries, Effect::Read, &pipe)
        .await?;
    let mut entries: Vec<(Vec<u8>, f64)> = per_set.into_iter().flatten().collect();
    if sets.len() > 1 {
        // One sorted set's order: score, then member bytes.
        entries.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    }
    Ok(pending_entries(entries))
}

/// A queue's live claims, read from the claim hashes and the index in one
/// MULTI.
pub(crate) async fn claims(store: &RedisStore, queue: &str) -> Result<Vec<ClaimInfo>, StoreError> {
    let q = store.keys().queue(queue);
    let snapshot = [&q.owners, &q.claimed, &q.index];
    check_keys(store, Op::Claims, "MULTI of HGETALLs and ZRANGE", &snapshot)?;
    let pipe = redis::pipe()
        .atomic()
        .hgetall(&q.owners)
        .hgetall(&q.claimed)
        .zrange_withscores(&q.index, 0, -1)
        .to_owned();
    type Snapshot = (
        Vec<(String, Vec<u8>)>,
        HashMap<String, Vec<u8>>,
        HashMap<String, f64>,
    );
    let (owners, mut members, expiries): Snapshot =
        store.conn().query(Op::Claims, Effect::Read, &pipe).await?;
    let mut claims: Vec<ClaimInfo> = owners
        .into_iter()
        .map(|(key, entry)| {
            let parsed = parse_owner(&entry);
            let member = Member::from(members.remove(&key).unwrap_or_default());
            // A Go processor's claim packs no score: it is the member's own.
            let score = parsed.as_ref().map(|e| e.score).unwrap_or_else(|| {
                wire::parse_member(member.as_bytes()).map_or(Score(0.0), |p| p.score())
            });
            ClaimInfo {
                generation: Generation::from_claim_key(&key),
                member,
                owner: OwnerToken::new(parsed.as_ref().map_or_else(
                    || String::from_utf8_lossy(&entry).into_owned(),
                    |e| e.owner.clone(),
                )),
                score,
                lease_expiry: expiries
                    .get(&key)
                    .map_or(Millis(0), |s| Score(*s).as_millis()),
                redeliveries: parsed.map_or(0, |e| e.redeliveries),
            }
        })
        .collect();
    claims.sort_by(|a, b| a.generation.cmp(&b.generation));
    Ok(claims)
}
