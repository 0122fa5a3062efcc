//! `peek`: a ZRANGE of the pending set, earliest score first.

use crate::codec::pending_entries;
use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::store::PendingEntry;
use claim_core::{Op, StoreError};

pub(crate) async fn peek(
    store: &RedisStore,
    queue: &str,
    offset: usize,
    limit: usize,
) -> Result<Vec<PendingEntry>, StoreError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let start = i64::try_from(offset).unwrap_or(i64::MAX);
    let stop = start.saturating_add(i64::try_from(limit).unwrap_or(i64::MAX) - 1);
    let cmd = redis::cmd("ZRANGE")
        .arg(store.keys().queue(queue).pending)
        .arg(start)
        .arg(stop)
        .arg("WITHSCORES")
        .to_owned();
    let entries = store.conn().query(Op::Peek, Effect::Read, &cmd).await?;
    Ok(pending_entries(entries))
}
