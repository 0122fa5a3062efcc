//! `release`: runs `lua/release.lua` (which `sweep` shares: neither counts as a delivery), one call per [`MAX_BATCH`] generations.

use crate::codec::{flag, per_item};
use crate::store::{MAX_BATCH, RedisStore};
use claim_core::{Generation, Op, OwnerToken, StoreError};

pub(crate) async fn release(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    generations: &[Generation],
) -> Result<Vec<bool>, StoreError> {
    return_claims(store, Op::Release, queue, owner, generations).await
}

/// Returns the claims `owner` holds to pending; `op` says which of the
/// two trait methods asked (`Release` or `Sweep`), for errors.
pub(crate) async fn return_claims(
    store: &RedisStore,
    op: Op,
    queue: &str,
    owner: &OwnerToken,
    generations: &[Generation],
) -> Result<Vec<bool>, StoreError> {
    let q = store.keys().queue(queue);
    let mut out = Vec::with_capacity(generations.len());
    for chunk in generations.chunks(MAX_BATCH) {
        let mut call = store.scripts().release.prepare_invoke();
        call.key(&q.pending)
            .key(&q.claimed)
            .key(&q.owners)
            .key(&q.index)
            .key(&q.deliveries);
        call.arg(owner.as_str());
        for g in chunk {
            call.arg(g.key());
        }
        let reply: Vec<i64> = store.conn().script(op, &call).await?;
        out.extend(per_item(op, reply, chunk.len())?.into_iter().map(flag));
    }
    Ok(out)
}
