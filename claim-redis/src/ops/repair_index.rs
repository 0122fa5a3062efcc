//! Part of `reclaim_expired`: runs `lua/repair_index.lua` when the claims index and the claim hashes disagree in size.

use super::depths::sizes;
use crate::conn::Effect;
use crate::keys::QueueKeys;
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::{Op, StoreError};
use std::collections::HashSet;

const OP: Op = Op::ReclaimExpired;

/// Repairs index ghosts when the index and the claims disagree in size.
pub(crate) async fn repair_index(store: &RedisStore, q: &QueueKeys) -> Result<usize, StoreError> {
    let (indexed, owned, claimed) = sizes(store, OP, &q.index, [&q.owners, &q.claimed]).await?;
    if indexed == owned && owned == claimed {
        return Ok(0);
    }
    super::call::check_keys(
        store,
        OP,
        "MULTI of ZRANGE and HKEYS",
        &[&q.index, &q.owners, &q.claimed],
    )?;
    let scan = redis::pipe()
        .atomic()
        .zrange(&q.index, 0, -1)
        .hkeys(&q.owners)
        .hkeys(&q.claimed)
        .to_owned();
    let (index, owners, members): (Vec<String>, Vec<String>, Vec<String>) =
        store.conn().query(OP, Effect::Read, &scan).await?;
    let (index, owners, members): (HashSet<_>, HashSet<_>, HashSet<_>) = (
        index.into_iter().collect(),
        owners.into_iter().collect(),
        members.into_iter().collect(),
    );
    let orphans = members.difference(&owners).count();
    if orphans > 0 {
        tracing::warn!(claimed = %q.claimed, orphans, "claimed members without an owner entry: left in place for an operator");
    }
    let drop: Vec<&String> = index.difference(&owners).collect();
    let add: Vec<&String> = owners.difference(&index).collect();
    let mut repaired = 0;
    let drops = drop.chunks(MAX_BATCH).map(|c| (c, true));
    for (chunk, dropping) in drops.chain(add.chunks(MAX_BATCH).map(|c| (c, false))) {
        let mut call = super::call::Call::new(store, &store.scripts().repair_index);
        call.key(&q.owners).key(&q.index).key(&q.claimed);
        call.arg(store.time_arg())
            .arg(store.inner.config.lease_ttl_ms)
            .arg(if dropping { chunk.len() } else { 0 });
        for key in chunk {
            call.arg(key.as_str());
        }
        let n: usize = call.run(store, OP).await?;
        repaired += n;
    }
    if repaired > 0 {
        tracing::warn!(index = %q.index, repaired, "repaired claims index ghosts");
    }
    Ok(repaired)
}
