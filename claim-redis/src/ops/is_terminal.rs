//! `is_terminal`: whether a generation's terminal marker is live; the hash-tagged layout: `cluster::is_terminal`.

use super::cluster;
use crate::conn::Effect;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::{Generation, Op, StoreError};

/// A marker holds its logical expiry; with server time Redis's own
/// expiry already agrees with it, so existence is enough.
pub(crate) async fn is_terminal(
    store: &RedisStore,
    generation: &Generation,
) -> Result<bool, StoreError> {
    match store.layout() {
        KeyLayout::Plain => plain(store, generation).await,
        KeyLayout::HashTagged => cluster::is_terminal::is_terminal(store, generation).await,
    }
}

/// One GET of the generation's marker.
async fn plain(store: &RedisStore, generation: &Generation) -> Result<bool, StoreError> {
    let cmd = redis::Cmd::get(store.keys().marker(generation));
    let value: Option<String> = store
        .conn()
        .query(Op::IsTerminal, Effect::Read, &cmd)
        .await?;
    Ok(value.is_some_and(|v| store.is_live_marker(&v)))
}
