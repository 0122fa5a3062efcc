//! `claims`: a queue's live claims, read from the claim hashes and the index in one MULTI.

use crate::codec::parse_owner;
use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::store::ClaimInfo;
use claim_core::{Generation, Member, Millis, Op, OwnerToken, Score, StoreError, wire};
use std::collections::HashMap;

pub(crate) async fn claims(store: &RedisStore, queue: &str) -> Result<Vec<ClaimInfo>, StoreError> {
    let q = store.keys().queue(queue);
    let snapshot = [&q.owners, &q.claimed, &q.index];
    super::call::check_keys(store, Op::Claims, "MULTI of HGETALLs and ZRANGE", &snapshot)?;
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
