//! `retry_entries`: a ZRANGE of the whole retry set, earliest due first.

use crate::codec::pending_entries;
use crate::conn::Effect;
use crate::store::RedisStore;
use claim_core::store::PendingEntry;
use claim_core::{Op, StoreError};

pub(crate) async fn retry_entries(store: &RedisStore) -> Result<Vec<PendingEntry>, StoreError> {
    let cmd = redis::cmd("ZRANGE")
        .arg(store.keys().retry())
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .to_owned();
    let entries = store
        .conn()
        .query(Op::RetryEntries, Effect::Read, &cmd)
        .await?;
    Ok(pending_entries(entries))
}
