//! `park_retry`: runs `lua/park_retry.lua`, one call per [`MAX_BATCH`](crate::store::MAX_BATCH) items, into the queue's retry set (an answered generation's claim is dropped, nothing parked; hash-tagged, its markers are read first: `ops/answered.rs`).
//!
//! Plain layout: the queue's retry set is the shared one (Go's). Hash-tagged:
//! it is the queue's own, `<base>:retry`, in the queue's slot, so the park
//! stays one atomic script; the queue is first added to the set of queues
//! with retry sets of their own ([`crate::keys::Keys::retry_queues`]), which
//! promotion reads. That SADD comes before the park: a crash in between
//! leaves a name whose retry set is empty (promotion finds nothing there),
//! never a parked entry promotion cannot find.

use super::owner_flags;
use crate::codec::score_arg;
use crate::conn::Effect;
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
    if store.keys().tagged() && !items.is_empty() {
        register_retry_queue(store, queue).await?;
    }
    let keys: [&str; 5] = [&q.claimed, &q.owners, &q.index, &q.deliveries, &q.retry];
    let script = &store.scripts().park_retry;
    owner_flags(
        store,
        (Op::ParkRetry, script),
        (queue, &keys),
        owner,
        items,
        (
            |i: &ParkItem| &i.generation,
            |i: &ParkItem| Some(i.member.as_bytes()),
        ),
        |call, item| {
            call.arg(item.generation.claim_key())
                .arg(item.member.as_bytes())
                .arg(score_arg(item.due.as_score()));
        },
    )
    .await
}

/// Adds `queue` to the hash-tagged layout's set of queues with a retry set
/// of their own (idempotent).
pub(crate) async fn register_retry_queue(
    store: &RedisStore,
    queue: &str,
) -> Result<(), StoreError> {
    let cmd = redis::Cmd::sadd(store.keys().retry_queues(), queue);
    store
        .conn()
        .query::<()>(Op::ParkRetry, Effect::Write, &cmd)
        .await
}
