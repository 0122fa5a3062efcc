//! `set_paused`: pauses (`SET <queue>:paused 1 GET`) or resumes (`DEL <queue>:paused`) claiming from a queue, one atomic command each.
//!
//! No script: each is one command, atomic on its own, on one queue's key
//! (one cluster slot). Its answer says whether it changed the flag: `SET ..
//! GET` returns the value before (nil when the queue was running), `DEL` the
//! number of keys deleted.

use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::{Op, StoreError};

pub(crate) async fn set_paused(
    store: &RedisStore,
    queue: &str,
    paused: bool,
) -> Result<bool, StoreError> {
    let key = store.keys().queue(queue).paused;
    let changed = if paused {
        let cmd = redis::cmd("SET").arg(&key).arg("1").arg("GET").to_owned();
        let before: Option<String> = store
            .conn()
            .query(Op::SetPaused, Effect::Write, &cmd)
            .await?;
        before.is_none()
    } else {
        let cmd = redis::Cmd::del(&key);
        let n: i64 = store
            .conn()
            .query(Op::SetPaused, Effect::Write, &cmd)
            .await?;
        n > 0
    };
    tracing::info!(queue, paused, changed, "queue pause flag set");
    Ok(changed)
}
