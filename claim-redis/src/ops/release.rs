//! `release`: runs `lua/release.lua` (which `sweep` shares: neither counts as a delivery), one call per [`MAX_BATCH`](crate::store::MAX_BATCH) generations.

use super::owner_flags;
use crate::store::RedisStore;
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
    let keys: [&str; 5] = [&q.pending, &q.claimed, &q.owners, &q.index, &q.deliveries];
    let script = &store.scripts().release;
    owner_flags(store, op, script, &keys, owner, generations, |call, g| {
        call.arg(g.key());
    })
    .await
}
