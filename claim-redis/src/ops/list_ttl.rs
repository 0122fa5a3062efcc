//! `list_ttl`: the TTL of a result list, in seconds.

use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::{Op, StoreError};

/// `TTL` of the (prefixed) list: `None` when it has no expiry or no key.
pub(crate) async fn list_ttl(store: &RedisStore, list: &str) -> Result<Option<u64>, StoreError> {
    let cmd = redis::cmd("TTL").arg(store.keys().list(list)).to_owned();
    let ttl: i64 = store.conn().query(Op::ListTtl, Effect::Read, &cmd).await?;
    Ok(u64::try_from(ttl).ok())
}
