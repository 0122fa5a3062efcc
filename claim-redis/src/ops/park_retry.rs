//! `park_retry`: runs `lua/park_retry.lua`, one call per [`MAX_BATCH`] items.

use crate::codec::{flag, per_item, score_arg};
use crate::store::{MAX_BATCH, RedisStore};
use claim_core::store::ParkItem;
use claim_core::{Op, OwnerToken, StoreError};

pub(crate) async fn park_retry(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[ParkItem],
) -> Result<Vec<bool>, StoreError> {
    let q = store.keys().queue(queue);
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(MAX_BATCH) {
        let mut call = store.scripts().park_retry.prepare_invoke();
        call.key(&q.claimed)
            .key(&q.owners)
            .key(&q.index)
            .key(&q.deliveries)
            .key(store.keys().retry());
        call.arg(owner.as_str());
        for item in chunk {
            call.arg(item.generation.key())
                .arg(item.member.as_bytes())
                .arg(score_arg(item.due.as_score()));
        }
        let reply: Vec<i64> = store.conn().script(Op::ParkRetry, &call).await?;
        let reply = per_item(Op::ParkRetry, reply, chunk.len())?;
        out.extend(reply.into_iter().map(flag));
    }
    Ok(out)
}
