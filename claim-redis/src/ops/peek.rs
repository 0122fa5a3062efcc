//! `peek` and `peek_after`: a page of the pending set, earliest score first, from a rank (ZRANGE) or above a score (ZRANGEBYSCORE, the admin CLI's `pending --after`).

use crate::codec::{pending_entries, score_arg};
use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::store::PendingEntry;
use claim_core::{Op, Score, StoreError};

/// Where a page starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Start {
    /// At this rank (0: the head).
    Rank(usize),
    /// At the first member scored above this.
    Above(Score),
}

/// Up to `limit` members of `queue`'s pending set from `start`.
pub(crate) async fn peek(
    store: &RedisStore,
    queue: &str,
    start: Start,
    limit: usize,
) -> Result<Vec<PendingEntry>, StoreError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let pending = store.keys().queue(queue).pending;
    let count = i64::try_from(limit).unwrap_or(i64::MAX);
    let (op, cmd) = match start {
        Start::Rank(offset) => {
            let first = i64::try_from(offset).unwrap_or(i64::MAX);
            let last = first.saturating_add(count - 1);
            let mut cmd = redis::cmd("ZRANGE");
            cmd.arg(pending).arg(first).arg(last).arg("WITHSCORES");
            (Op::Peek, cmd)
        }
        Start::Above(score) => {
            let mut cmd = redis::cmd("ZRANGEBYSCORE");
            cmd.arg(pending)
                .arg(format!("({}", score_arg(score)))
                .arg("+inf")
                .arg("WITHSCORES")
                .arg("LIMIT")
                .arg(0)
                .arg(count);
            (Op::PeekAfter, cmd)
        }
    };
    let entries = store.conn().query(op, Effect::Read, &cmd).await?;
    Ok(pending_entries(entries))
}
