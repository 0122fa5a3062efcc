//! `park_retry` in the hash-tagged layout: the queue registered as one with a retry set of its own, then `lua/park_retry.lua` into that set, after reading the claimed generations' markers (`answered`).
//!
//! The queue's retry set is its own, `<base>:retry`, in the queue's slot,
//! so the park stays one atomic script; the queue is first added to the
//! set of queues with retry sets of their own
//! ([`crate::keys::Keys::retry_queues`]), which promotion reads. That SADD
//! comes before the park: a crash in between leaves a name whose retry set
//! is empty (promotion finds nothing there), never a parked entry
//! promotion cannot find.

use super::answered;
use crate::conn::Effect;
use crate::ops::owner_flags::OwnerScript;
use crate::state::RedisStore;
use claim_core::store::ParkItem;
use claim_core::{Op, OwnerToken, StoreError};

/// Registers the queue, then parks `items` with `park` (the plain
/// layout's script and arguments), their markers read first.
pub(crate) async fn park_retry(
    store: &RedisStore,
    park: &OwnerScript<'_, ParkItem>,
    owner: &OwnerToken,
    items: &[ParkItem],
) -> Result<Vec<bool>, StoreError> {
    if !items.is_empty() {
        register_retry_queue(store, park.queue).await?;
    }
    answered::owner_flags(store, park, owner, items, |i| Some(i.member.as_bytes())).await
}

/// Adds `queue` to the set of queues with a retry set of their own
/// (idempotent).
async fn register_retry_queue(store: &RedisStore, queue: &str) -> Result<(), StoreError> {
    let cmd = redis::Cmd::sadd(store.keys().retry_queues(), queue);
    store
        .conn()
        .query::<()>(Op::ParkRetry, Effect::Write, &cmd)
        .await
}
