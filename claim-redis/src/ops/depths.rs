//! `depths`: the sizes of a queue's pending set, live claims and dead hash, in one MULTI.

use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::store::QueueDepths;
use claim_core::{Op, StoreError};

pub(crate) async fn depths(store: &RedisStore, queue: &str) -> Result<QueueDepths, StoreError> {
    let q = store.keys().queue(queue);
    let (pending, claimed, dead) =
        sizes(store, Op::Depths, &q.pending, [&q.owners, &q.dead]).await?;
    Ok(QueueDepths {
        pending,
        claimed,
        dead,
    })
}

/// The sizes of a sorted set and of two hashes, read in one MULTI.
pub(crate) async fn sizes(
    store: &RedisStore,
    op: Op,
    zset: &str,
    hashes: [&str; 2],
) -> Result<(usize, usize, usize), StoreError> {
    super::call::check_keys(
        store,
        op,
        "MULTI of ZCARD and HLENs",
        &[zset, hashes[0], hashes[1]],
    )?;
    let pipe = redis::pipe()
        .atomic()
        .zcard(zset)
        .hlen(hashes[0])
        .hlen(hashes[1])
        .to_owned();
    store.conn().query(op, Effect::Read, &pipe).await
}
