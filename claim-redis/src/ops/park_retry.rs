//! `park_retry`: runs `lua/park_retry.lua`, one call per [`MAX_BATCH`](crate::store::MAX_BATCH) items.

use super::owner_flags;
use crate::codec::score_arg;
use crate::store::RedisStore;
use claim_core::store::ParkItem;
use claim_core::{Op, OwnerToken, StoreError};

pub(crate) async fn park_retry(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[ParkItem],
) -> Result<Vec<bool>, StoreError> {
    let q = store.keys().queue(queue);
    let retry = store.keys().retry();
    let keys: [&str; 5] = [&q.claimed, &q.owners, &q.index, &q.deliveries, retry];
    let script = &store.scripts().park_retry;
    owner_flags(
        store,
        Op::ParkRetry,
        script,
        &keys,
        owner,
        items,
        |call, item| {
            call.arg(item.generation.claim_key())
                .arg(item.member.as_bytes())
                .arg(score_arg(item.due.as_score()));
        },
    )
    .await
}
