//! `is_terminal`: whether a generation's terminal marker is live.

use super::per_request;
use crate::conn::Effect;
use crate::keys::{GenerationKey, MARKER_PREFIX};
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
    let found = values.iter().any(|v| {
        let text = v.as_deref().map(String::from_utf8_lossy);
        live(store, text.as_deref())
    });
    if found {
        return Ok(true);
    }
    scan_markers(store, generation).await
}

/// The generation's markers on lists the configuration does not name (a
/// member's own list), found by `SCAN … MATCH` over the keyspace: slow,
/// but `is_terminal` is an inspection (tests, reconciling an unknown
/// outcome), never on the hot path. On a cluster it covers the node the
/// client sends the SCAN to.
async fn scan_markers(store: &RedisStore, generation: &Generation) -> Result<bool, StoreError> {
    let keys = store.keys();
    let glob = |s: &str| {
        s.chars().fold(String::new(), |mut out, c| {
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                out.push('\\');
            }
            out.push(c);
            out
        })
    };
    let pattern = format!(
        "{}{{*}}:{}",
        glob(&format!("{}{MARKER_PREFIX}", keys.prefix())),
        glob(&GenerationKey(generation).to_string())
    );
    let mut cursor = 0u64;
    loop {
        let cmd = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1000)
            .to_owned();
        let (next, found): (u64, Vec<String>) = store
            .conn()
            .query(Op::IsTerminal, Effect::Read, &cmd)
            .await?;
        if !found.is_empty() {
            let values = per_request::mget(store, Op::IsTerminal, &found).await?;
            let live_one = values.iter().any(|v| {
                let text = v.as_deref().map(String::from_utf8_lossy);
                live(store, text.as_deref())
            });
            if live_one {
                return Ok(true);
            }
        }
        if next == 0 {
            return Ok(false);
        }
        cursor = next;
    }
}
