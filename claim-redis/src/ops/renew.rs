//! `renew`: runs `lua/renew.lua`, one call per [`MAX_BATCH`] generations.

use super::call::{self, evalsha};
use crate::codec::renew_outcome;
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::ClaimKey;
use claim_core::store::RenewOutcome;
use claim_core::{Generation, Op, OwnerToken, StoreError};
use redis::RedisWrite;

pub(crate) async fn renew(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    generations: &[Generation],
) -> Result<Vec<RenewOutcome>, StoreError> {
    let q = store.keys().queue(queue);
    let time = store.time_arg();
    let mut out = Vec::with_capacity(generations.len());
    for chunk in generations.chunks(MAX_BATCH) {
        let script = &store.scripts().renew;
        let mut cmd = evalsha(script, 3, 3 + chunk.len(), 48 * chunk.len());
        cmd.arg(&q.owners).arg(&q.index).arg(&q.claimed);
        cmd.arg(owner.as_str())
            .arg(&time)
            .arg(store.inner.config.lease_ttl_ms);
        for g in chunk {
            cmd.write_arg_fmt(ClaimKey(g));
        }
        let reply = call::run_per_item(store, Op::Renew, script, &cmd, chunk.len()).await?;
        out.extend(reply.into_iter().map(renew_outcome));
    }
    Ok(out)
}
