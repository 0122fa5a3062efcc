//! `is_terminal`: whether a generation's terminal marker is live.

use crate::conn::Effect;
use crate::store::RedisStore;
use claim_core::marker::parse_marker;
use claim_core::{Generation, Op, StoreError};

/// A marker holds its logical expiry; with server time Redis's own
/// expiry already agrees with it, so existence is enough.
pub(crate) async fn is_terminal(
    store: &RedisStore,
    generation: &Generation,
) -> Result<bool, StoreError> {
    let cmd = redis::Cmd::get(store.keys().marker(generation));
    let value: Option<String> = store
        .conn()
        .query(Op::IsTerminal, Effect::Read, &cmd)
        .await?;
    Ok(match (value, store.explicit_now()) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(v), Some(now)) => parse_marker(&v).is_none_or(|(expiry, _)| expiry > now.0),
    })
}
