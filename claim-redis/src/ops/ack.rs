//! `ack`: runs `lua/ack.lua`, one call per [`MAX_BATCH`](crate::state::MAX_BATCH) items, arguments written in place; the hash-tagged layout: `cluster::ack`.

use super::batches::in_batches;
use super::call::{self, evalsha};
use super::cluster;
use super::script_args::{ack_args, ack_bytes, ack_list_keys, ack_runs};
use crate::codec::{ack_outcome, packed_codes};
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::store::{AckItem, AckOutcome};
use claim_core::{Op, OwnerToken, StoreError};
use redis::RedisWrite;

/// Delivers the records; the layout is `lua/ack.lua`'s header.
pub(crate) async fn ack(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[AckItem],
) -> Result<Vec<AckOutcome>, StoreError> {
    let codes = match store.layout() {
        KeyLayout::HashTagged => {
            let q = store.keys().queue(queue);
            let chunk_acks = |chunk| cluster::ack::ack_chunk(store, (queue, &q), owner, chunk);
            in_batches(items, chunk_acks).await?
        }
        KeyLayout::Plain => {
            in_batches(items, |chunk| one_script(store, (queue, owner), chunk)).await?
        }
    };
    Ok(codes.into_iter().map(ack_outcome).collect())
}

/// Runs ack.lua on at most [`MAX_BATCH`](crate::state::MAX_BATCH) items, with every key an item
/// touches (its marker, producer keys and payload key), and answers its
/// code per item.
async fn one_script(
    store: &RedisStore,
    (queue, owner): (&str, &OwnerToken),
    chunk: &[AckItem],
) -> Result<Vec<i64>, StoreError> {
    let q = store.keys().queue(queue);
    let keys = store.keys();
    let n = chunk.len();
    let runs = ack_runs(chunk);
    let payloads = chunk.iter().filter(|i| i.payload_ref.is_some()).count();
    let script = &store.scripts().ack;
    let mut cmd = evalsha(
        script,
        7 + runs.len() + 3 * n + payloads,
        6 + 3 * runs.len() + 6 * n + payloads,
        ack_bytes(chunk),
    );
    for key in q.all() {
        cmd.arg(key);
    }
    cmd.arg(keys.clock_side());
    ack_list_keys(&mut cmd, store, &runs);
    for item in chunk {
        cmd.write_arg_fmt(keys.marker_key(&item.generation));
    }
    for item in chunk {
        let id = &item.generation.id;
        cmd.write_arg_fmt(keys.active_key(id));
        cmd.write_arg_fmt(keys.cancel_key(id));
    }
    for payload_ref in chunk.iter().filter_map(|i| i.payload_ref.as_deref()) {
        cmd.write_arg_fmt(format_args!("{}{payload_ref}", keys.prefix()));
    }
    ack_args(&mut cmd, store, (queue, owner), &runs, chunk);
    for (i, item) in chunk.iter().enumerate() {
        if item.payload_ref.is_some() {
            cmd.arg(i + 1);
        }
    }
    let reply = call::run(store, Op::Ack, script, &cmd).await?;
    packed_codes(Op::Ack, &reply, n)
}
