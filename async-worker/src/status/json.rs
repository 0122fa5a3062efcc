//! The `/status.json` body: the snapshot the page shows, as JSON for scripts (the replica, then the store's view, or the error that kept it from being read).

use super::{Replica, Snapshot, StoreView};
use serde::Serialize;

/// The body: `store` when the store was read, else `store_error`.
#[derive(Serialize)]
struct Body<'a> {
    replica: &'a Replica,
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<&'a StoreView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    store_error: Option<&'a str>,
}

/// `snapshot` as pretty-printed JSON. Its rows are the page's (the same
/// `admin stats` types), so it carries no payload either.
pub fn render(snapshot: &Snapshot) -> String {
    let body = Body {
        replica: &snapshot.replica,
        store: snapshot.store.as_ref().ok(),
        store_error: snapshot.store.as_ref().err().map(String::as_str),
    };
    // Plain data (strings, numbers, options): serializing cannot fail.
    serde_json::to_string_pretty(&body).unwrap_or_default()
}
