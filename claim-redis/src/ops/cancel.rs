//! `cancel`: runs `lua/cancel.lua`, as the Go producer cancels.

use crate::codec::flag;
use crate::store::RedisStore;
use claim_core::{Op, StoreError, wire};

/// As Go: the active token, if any, becomes the cancel marker for 7 days.
pub(crate) async fn cancel(store: &RedisStore, id: &str) -> Result<bool, StoreError> {
    let keys = store.keys();
    let ttl = wire::CANCEL_MARKER_TTL_SECS * 1000;
    let mut call = super::call::Call::new(store, &store.scripts().cancel);
    call.key(keys.active(id))
        .key(keys.cancel(id))
        .key(keys.clock_side());
    call.arg(store.time_arg())
        .arg(store.real_ttl(ttl))
        .arg(store.producer_now().plus(ttl).0);
    Ok(flag(call.run(store, Op::Cancel).await?))
}
