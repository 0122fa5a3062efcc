//! `release`: runs `lua/release.lua` (not a delivery; an answered generation's claim is dropped, not returned), one call per [`MAX_BATCH`](crate::state::MAX_BATCH) generations; hash-tagged, after reading the markers (`cluster::answered`).

use super::cluster;
use super::owner_flags::OwnerScript;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::{Generation, Op, OwnerToken, StoreError};

/// Returns the claims `owner` holds to pending (the runtime's shutdown
/// sweep is this too).
pub(crate) async fn release(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    generations: &[Generation],
) -> Result<Vec<bool>, StoreError> {
    let q = store.keys().queue(queue);
    let keys: [&str; 5] = [&q.pending, &q.claimed, &q.owners, &q.index, &q.deliveries];
    let release = OwnerScript {
        op: Op::Release,
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
