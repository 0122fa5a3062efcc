//! `enqueue`: runs `lua/enqueue.lua`, the Go producer's enqueue with its sequence stamped into the member; the hash-tagged layout: `cluster::enqueue`.

use super::call::Call;
use super::cluster;
use super::script_args::{enqueue_args, enqueue_payload_args};
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::store::Submission;
use claim_core::{Member, Op, StoreError, wire};

/// Stamps the next sequence of the queue and deadline and enqueues; the
/// layout is `lua/enqueue.lua`'s header. Returns the member as enqueued.
pub(crate) async fn enqueue(
    store: &RedisStore,
    queue: &str,
    s: &Submission,
) -> Result<Member, StoreError> {
    let template = wire::seq_template(s.member.as_bytes())
        .map_err(|e| StoreError::invalid(Op::Enqueue, e.to_string()))?;
    let seq = match store.layout() {
        KeyLayout::Plain => plain(store, queue, s, &template).await?,
        KeyLayout::HashTagged => cluster::enqueue::enqueue(store, queue, s, &template).await?,
    };
    Ok(Member::from(template.stamp(seq)))
}

/// One script call with every key: the sequence, the producer keys, the
/// pending set, the side hash and the payload key; answers the sequence.
async fn plain(
    store: &RedisStore,
    queue: &str,
    s: &Submission,
    template: &wire::SeqTemplate,
) -> Result<i64, StoreError> {
    let keys = store.keys();
    let id = &s.generation.id;
    let now = store.producer_now();
    let mut call = Call::new(store, &store.scripts().enqueue);
    call.key(keys.seq(queue, s.deadline))
        .key(keys.cancel(id))
        .key(keys.active(id))
        .key(keys.queue(queue).pending)
        .key(keys.clock_side());
    if s.payload.is_some() {
        call.key(keys.payload(&s.payload_key()));
    }
    enqueue_args(&mut call, store, s, template, now);
    enqueue_payload_args(&mut call, store, s, now);
    call.run(store, Op::Enqueue).await
}
