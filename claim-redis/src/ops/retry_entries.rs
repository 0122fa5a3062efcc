//! `retry_entries`: a ZRANGE of each whole retry set (the shared one; hash-tagged, also each queue's own), earliest due first.

use super::retry_sets::retry_set_keys;
use crate::codec::pending_entries;
use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::store::PendingEntry;
use claim_core::{Op, StoreError};

pub(crate) async fn retry_entries(store: &RedisStore) -> Result<Vec<PendingEntry>, StoreError> {
    let sets = retry_set_keys(store, Op::RetryEntries).await?;
    let mut pipe = redis::pipe();
    for set in &sets {
        pipe.cmd("ZRANGE").arg(set).arg(0).arg(-1).arg("WITHSCORES");
    }
    let per_set: Vec<Vec<(Vec<u8>, f64)>> = store
        .conn()
        .query(Op::RetryEntries, Effect::Read, &pipe)
        .await?;
    let mut entries: Vec<(Vec<u8>, f64)> = per_set.into_iter().flatten().collect();
    if sets.len() > 1 {
        // One sorted set's order: score, then member bytes.
        entries.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    }
    Ok(pending_entries(entries))
}
