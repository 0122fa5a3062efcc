//! `enqueue` in the hash-tagged layout, in Go's cluster order: the per-request keys first (`cluster::submit::producer_keys`), then `lua/enqueue.lua` on the sequence key and the pending key, in the queue's slot.

use super::submit::producer_keys;
use crate::ops::call::Call;
use crate::ops::script_args::enqueue_args;
use crate::state::RedisStore;
use claim_core::store::Submission;
use claim_core::{Op, StoreError, wire};

/// Writes the producer keys, then stamps and adds the member; answers the
/// sequence. The split is safe as `producer_keys` argues: the member is
/// added only after its keys landed.
pub(crate) async fn enqueue(
    store: &RedisStore,
    queue: &str,
    s: &Submission,
    template: &wire::SeqTemplate,
) -> Result<i64, StoreError> {
    let keys = store.keys();
    let now = store.producer_now();
    let mut call = Call::new(store, &store.scripts().enqueue);
    let seq_key = keys.seq(queue, s.deadline);
    producer_keys(store, Op::Enqueue, s).await?;
    call.key(&seq_key)
        .key(keys.queue(queue).pending)
        .key(keys.clock_side_for(&seq_key));
    enqueue_args(&mut call, store, s, template, now);
    call.run(store, Op::Enqueue).await
}
