//! `depths`: the sizes of a queue's pending set, live claims and dead hash, in one MULTI.

use crate::conn::Effect;
use crate::store::RedisStore;
use claim_core::store::QueueDepths;
use claim_core::{Op, StoreError};

pub(crate) async fn depths(store: &RedisStore, queue: &str) -> Result<QueueDepths, StoreError> {
    let q = store.keys().queue(queue);
    let pipe = redis::pipe()
        .atomic()
        .zcard(&q.pending)
        .hlen(&q.owners)
        .hlen(&q.dead)
        .to_owned();
    let (pending, claimed, dead) = store.conn().query(Op::Depths, Effect::Read, &pipe).await?;
    Ok(QueueDepths {
        pending,
        claimed,
        dead,
    })
}
