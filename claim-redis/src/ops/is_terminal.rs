//! `is_terminal`: whether a generation's terminal marker is live.

use super::per_request;
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
    let keys = store.keys();
    if keys.tagged() {
        return is_terminal_tagged(store, generation).await;
    }
    let cmd = redis::Cmd::get(keys.marker(generation));
    let value: Option<String> = store
        .conn()
        .query(Op::IsTerminal, Effect::Read, &cmd)
        .await?;
    Ok(live(store, value.as_deref()))
}

fn live(store: &RedisStore, value: Option<&str>) -> bool {
    match (value, store.explicit_now()) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(v), Some(now)) => parse_marker(v).is_none_or(|(expiry, _)| expiry > now.0),
    }
}

/// Hash-tagged layout: a marker lies in its result list's slot, and the
/// generation alone does not name the list, so the markers for every list
/// the configuration names (the default list and each queue's) are read,
/// per slot; any live one answers.
async fn is_terminal_tagged(
    store: &RedisStore,
    generation: &Generation,
) -> Result<bool, StoreError> {
    let keys = store.keys();
    let config = &store.inner.config;
    let mut lists: Vec<&str> = vec![&config.default_result_list];
    lists.extend(config.queue_result_lists.values().map(String::as_str));
    lists.sort_unstable();
    lists.dedup();
    let markers: Vec<String> = lists
        .iter()
        .map(|list| keys.marker_for(&keys.list(list), generation))
        .collect();
    let values = per_request::mget(store, Op::IsTerminal, &markers).await?;
    Ok(values.iter().any(|v| {
        let text = v.as_deref().map(String::from_utf8_lossy);
        live(store, text.as_deref())
    }))
}
