//! The retry sets of the hash-tagged layout: the shared one (Go's), plus each registered queue's own.

use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::{Op, StoreError};

/// Every retry set to inspect or drain: the shared (Go's) one first, then
/// `<base>:retry` of each queue in
/// [`crate::keys::Keys::retry_queues`] and of the default queue, as (queue
/// name, key); the shared set has no queue (`None`).
pub(crate) async fn retry_sets(
    store: &RedisStore,
    op: Op,
) -> Result<Vec<(Option<String>, String)>, StoreError> {
    let keys = store.keys();
    let mut sets = vec![(None, keys.retry().to_owned())];
    let cmd = redis::Cmd::smembers(keys.retry_queues());
    let mut queues: Vec<String> = store.conn().query(op, Effect::Read, &cmd).await?;
    queues.push(store.inner.config.default_queue.clone());
    queues.sort();
    queues.dedup();
    for queue in queues {
        let retry = keys.queue(&queue).retry;
        sets.push((Some(queue), retry));
    }
    Ok(sets)
}
