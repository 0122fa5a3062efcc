//! `retry_depth`: a ZCARD of the retry set.

use crate::conn::Effect;
use crate::store::RedisStore;
use claim_core::{Op, StoreError};

pub(crate) async fn retry_depth(store: &RedisStore) -> Result<usize, StoreError> {
    let cmd = redis::Cmd::zcard(store.keys().retry());
    store.conn().query(Op::RetryDepth, Effect::Read, &cmd).await
}
