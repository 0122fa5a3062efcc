//! `dead_letter`: runs `lua/dead_letter.lua`, moving one pending member to the dead hash with its reason.

use crate::codec::{dead_json, flag};
use crate::state::RedisStore;
use claim_core::{Member, Op, StoreError};

pub(crate) async fn dead_letter(
    store: &RedisStore,
    queue: &str,
    member: &Member,
    reason: &str,
) -> Result<bool, StoreError> {
    let now = store.now_ms(Op::DeadLetter).await?;
    let q = store.keys().queue(queue);
    let mut call = super::call::Call::new(store, &store.scripts().dead_letter);
    call.key(&q.pending).key(&q.dead);
    call.arg(member.as_bytes()).arg(dead_json(reason, now));
    let moved = flag(call.run(store, Op::DeadLetter).await?);
    if moved {
        tracing::debug!(queue, "member dead-lettered");
    }
    Ok(moved)
}
