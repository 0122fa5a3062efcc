//! `cancel`: runs `lua/cancel.lua`, as the Go producer cancels; the hash-tagged layout: `cluster::cancel`.

use super::call::Call;
use super::cluster;
use crate::codec::flag;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::{Op, StoreError, wire};

/// As Go: the active token, if any, becomes the cancel marker for 7 days.
pub(crate) async fn cancel(store: &RedisStore, id: &str) -> Result<bool, StoreError> {
    let ttl = wire::CANCEL_MARKER_TTL_SECS * 1000;
    match store.layout() {
        KeyLayout::Plain => plain(store, id, ttl).await,
        KeyLayout::HashTagged => cluster::cancel::cancel(store, id, ttl).await,
    }
}

/// One script call on the active key, the cancel key and the side hash.
async fn plain(store: &RedisStore, id: &str, ttl: u64) -> Result<bool, StoreError> {
    let keys = store.keys();
    let mut call = Call::new(store, &store.scripts().cancel);
    call.key(keys.active(id))
        .key(keys.cancel(id))
        .key(keys.clock_side());
    call.arg(store.time_arg())
        .arg(store.real_ttl(ttl))
        .arg(store.producer_now().plus(ttl).0);
    Ok(flag(call.run(store, Op::Cancel).await?))
}
