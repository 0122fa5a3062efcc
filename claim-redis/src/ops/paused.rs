//! `paused`: whether an operator has paused claiming from a queue (`<queue>:paused` exists).

use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::{Op, StoreError};

pub(crate) async fn paused(store: &RedisStore, queue: &str) -> Result<bool, StoreError> {
    let cmd = redis::Cmd::exists(store.keys().queue(queue).paused);
    let n: i64 = store.conn().query(Op::Paused, Effect::Read, &cmd).await?;
    Ok(n > 0)
}
