//! `release`: runs `lua/release.lua` (not a delivery; an answered generation's claim is dropped, not returned), one call per [`MAX_BATCH`](crate::store::MAX_BATCH) generations; hash-tagged, after reading the markers (`ops/answered.rs`).

use super::owner_flags;
use crate::store::RedisStore;
use claim_core::{Generation, Op, OwnerToken, StoreError};

/// Writes the trait method that runs `lua/release.lua`, with the [`Op`]
/// its errors name.
macro_rules! returning_claims {
    ($($name:ident = $op:ident),*) => {$(
        pub(crate) async fn $name(
            store: &RedisStore,
            queue: &str,
            owner: &OwnerToken,
            generations: &[Generation],
        ) -> Result<Vec<bool>, StoreError> {
            return_claims(store, Op::$op, queue, owner, generations).await
        }
    )*};
}

returning_claims!(release = Release);

/// Returns the claims `owner` holds to pending; `op` names the trait
/// method that asked, for errors.
async fn return_claims(
    store: &RedisStore,
    op: Op,
    queue: &str,
    owner: &OwnerToken,
    generations: &[Generation],
) -> Result<Vec<bool>, StoreError> {
    let q = store.keys().queue(queue);
    let keys: [&str; 5] = [&q.pending, &q.claimed, &q.owners, &q.index, &q.deliveries];
    let script = &store.scripts().release;
    owner_flags(
        store,
        (op, script),
        (queue, &keys),
        owner,
        generations,
        (|g: &Generation| g, |_: &Generation| None),
        |call, g| {
            call.arg(g.claim_key());
        },
    )
    .await
}
