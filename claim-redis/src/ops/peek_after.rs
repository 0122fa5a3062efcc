//! `peek_after`: a ZRANGEBYSCORE of the pending set above a score, earliest first (the admin CLI's `pending --after`).

use crate::codec::{pending_entries, score_arg};
use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::store::PendingEntry;
use claim_core::{Op, Score, StoreError};

pub(crate) async fn peek_after(
    store: &RedisStore,
    queue: &str,
    after: Score,
    limit: usize,
) -> Result<Vec<PendingEntry>, StoreError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let cmd = redis::cmd("ZRANGEBYSCORE")
        .arg(store.keys().queue(queue).pending)
        .arg(format!("({}", score_arg(after)))
        .arg("+inf")
        .arg("WITHSCORES")
        .arg("LIMIT")
        .arg(0)
        .arg(i64::try_from(limit).unwrap_or(i64::MAX))
        .to_owned();
    let entries = store
        .conn()
        .query(Op::PeekAfter, Effect::Read, &cmd)
        .await?;
    Ok(pending_entries(entries))
}
