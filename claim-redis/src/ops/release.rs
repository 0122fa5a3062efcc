//! `release` and `sweep`: run `lua/release.lua` (neither counts as a delivery; an answered generation's claim is dropped, not returned), one call per [`MAX_BATCH`](crate::state::MAX_BATCH) generations; hash-tagged, after reading the markers (`cluster::answered`).

use super::cluster;
use super::owner_flags::OwnerScript;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::{Generation, Op, OwnerToken, StoreError};

/// Writes the two trait methods that run `lua/release.lua`, told apart
/// only by their [`Op`] (named in errors).
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

returning_claims!(release = Release, sweep = Sweep);

/// Returns the claims `owner` holds to pending; `op` says which of the
/// two trait methods asked (`Release` or `Sweep`), for errors.
async fn return_claims(
    store: &RedisStore,
    op: Op,
    queue: &str,
    owner: &OwnerToken,
    generations: &[Generation],
) -> Result<Vec<bool>, StoreError> {
    let q = store.keys().queue(queue);
    let keys: [&str; 5] = [&q.pending, &q.claimed, &q.owners, &q.index, &q.deliveries];
    let release = OwnerScript {
        op,
        script: &store.scripts().release,
        queue,
        keys: &keys,
        generation: |g: &Generation| g,
        args: |call, g| {
            call.arg(g.claim_key());
        },
    };
    match store.layout() {
        KeyLayout::Plain => release.run(store, owner, generations).await,
        KeyLayout::HashTagged => {
            cluster::answered::owner_flags(store, &release, owner, generations, |_| None).await
        }
    }
}
