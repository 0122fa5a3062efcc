//! `retry_depth`: a ZCARD of each retry set (the shared one; hash-tagged, also each queue's own).

use super::retry_sets::retry_set_keys;
use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::{Op, StoreError};

pub(crate) async fn retry_depth(store: &RedisStore) -> Result<usize, StoreError> {
    let sets = retry_set_keys(store, Op::RetryDepth).await?;
    let mut pipe = redis::pipe();
    for set in &sets {
        pipe.zcard(set);
    }
    let sizes: Vec<usize> = store
        .conn()
        .query(Op::RetryDepth, Effect::Read, &pipe)
        .await?;
    Ok(sizes.into_iter().sum())
}
