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
    let now = store.producer_now();
    let mut call = Call::new(store, &store.scripts().enqueue);
    let payload_in_script = match store.layout() {
        KeyLayout::Plain => {
            plain_keys(&mut call, store, queue, s);
            true
        }
        KeyLayout::HashTagged => {
            cluster::enqueue::producer_keys_then_keys(store, &mut call, queue, s).await?;
            false
        }
    };
    enqueue_args(&mut call, store, s, &template, now);
    if payload_in_script {
        enqueue_payload_args(&mut call, store, s, now);
    }
    let seq: i64 = call.run(store, Op::Enqueue).await?;
    Ok(Member::from(template.stamp(seq)))
}

/// The plain layout's keys, every one in the script call: the sequence,
/// the producer keys, the pending set, the side hash and the payload key
/// (its arguments follow the member's).
fn plain_keys(call: &mut Call<'_>, store: &RedisStore, queue: &str, s: &Submission) {
    let keys = store.keys();
    let id = &s.generation.id;
    call.key(keys.seq(queue, s.deadline))
        .key(keys.cancel(id))
        .key(keys.active(id))
        .key(keys.queue(queue).pending)
        .key(keys.clock_side());
    if s.payload.is_some() {
        call.key(keys.payload(&s.payload_key()));
    }
}
