//! `enqueue` in the hash-tagged layout, in Go's cluster order: the per-request keys first (`cluster::submit::producer_keys`), then `lua/enqueue.lua` on the sequence key and the pending key, in the queue's slot.

use super::submit::producer_keys;
use crate::ops::call::Call;
use crate::state::RedisStore;
use claim_core::store::Submission;
use claim_core::{Op, StoreError};

/// Writes the producer keys, then names the script's keys (the sequence
/// key, the pending key, the side hash) in `call`. The split is safe as
/// `producer_keys` argues: the member is added only after its keys landed.
pub(crate) async fn producer_keys_then_keys(
    store: &RedisStore,
    call: &mut Call<'_>,
    queue: &str,
    s: &Submission,
) -> Result<(), StoreError> {
    let keys = store.keys();
    let seq_key = keys.seq(queue, s.deadline);
    producer_keys(store, Op::Enqueue, s).await?;
    call.key(&seq_key)
        .key(keys.queue(queue).pending)
        .key(keys.clock_side_for(&seq_key));
    Ok(())
}
