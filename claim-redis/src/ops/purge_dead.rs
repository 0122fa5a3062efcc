//! `purge_dead`: runs `lua/purge_dead.lua`, deleting dead entries of one queue, one call per [`MAX_BATCH`] members.

use crate::codec::{flag, per_item};
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::{Member, Op, StoreError};

pub(crate) async fn purge_dead(
    store: &RedisStore,
    queue: &str,
    members: &[Member],
) -> Result<Vec<bool>, StoreError> {
    let q = store.keys().queue(queue);
    let mut out = Vec::with_capacity(members.len());
    for chunk in members.chunks(MAX_BATCH) {
        let script = &store.scripts().purge_dead;
        let mut call = script.prepare_invoke();
        call.key(&q.dead);
        for m in chunk {
            call.arg(m.as_bytes());
        }
        let on = [q.dead.as_bytes()];
        let reply: Vec<i64> = store
            .conn()
            .script(Op::PurgeDead, script, on, &call)
            .await?;
        out.extend(
            per_item(Op::PurgeDead, reply, chunk.len())?
                .into_iter()
                .map(flag),
        );
    }
    let purged = out.iter().filter(|p| **p).count();
    tracing::info!(queue, purged, "dead entries purged");
    Ok(out)
}
