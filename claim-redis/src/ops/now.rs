//! `now`: the store's time, the injected clock or the server's `TIME`.

use crate::state::RedisStore;
use claim_core::{Millis, Op, StoreError};

pub(crate) async fn now(store: &RedisStore) -> Result<Millis, StoreError> {
    store.now_ms(Op::Now).await
}
