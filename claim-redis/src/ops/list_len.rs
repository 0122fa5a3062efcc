//! `list_len`: the number of records in a result list.

use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::{Op, StoreError};

/// `LLEN` of the (prefixed) list; 0 when there is no key.
pub(crate) async fn list_len(store: &RedisStore, list: &str) -> Result<usize, StoreError> {
    let cmd = redis::cmd("LLEN").arg(store.keys().list(list)).to_owned();
    store.conn().query(Op::ListLen, Effect::Read, &cmd).await
}
