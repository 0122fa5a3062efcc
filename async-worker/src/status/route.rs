//! `GET /status` and `GET /status.json` on the health port: a fresh snapshot as a page or as JSON, 200 when Redis was read, 503 when not (both still show this replica).
//!
//! Only `GET` (and `HEAD`) is routed: there is nothing to post, and the
//! page has no form or script. Mutations are the admin CLI's, under
//! Redis's own ACL.

use super::{Replica, Snapshot, StatusSource, StoreView, html};
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use serde::Serialize;

/// The `/status` route over `source`.
pub fn status_router(source: StatusSource) -> Router {
    Router::new()
        .route("/status", get(status))
        .route("/status.json", get(status_json))
        .with_state(source)
}

/// 200 when the snapshot read the store, else 503.
fn code_of(snapshot: &Snapshot) -> StatusCode {
    if snapshot.store.is_ok() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    }
}

/// The `/status.json` body, the snapshot the page shows as JSON for
/// scripts: the replica, then `store` when the store was read, else
/// `store_error`. Its rows are the page's (the same `admin stats` types),
/// so it carries no payload either.
#[derive(Serialize)]
struct JsonBody<'a> {
    replica: &'a Replica,
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<&'a StoreView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    store_error: Option<&'a str>,
}

async fn status_json(State(source): State<StatusSource>) -> impl IntoResponse {
    let snapshot = source.snapshot().await;
    let body = JsonBody {
        replica: &snapshot.replica,
        store: snapshot.store.as_ref().ok(),
        store_error: snapshot.store.as_ref().err().map(String::as_str),
    };
    // Plain data (strings, numbers, options): serializing cannot fail.
    let text = serde_json::to_string_pretty(&body).unwrap_or_default();
    let headers = [
        (header::CONTENT_TYPE, "application/json"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    (code_of(&snapshot), headers, text)
}

async fn status(State(source): State<StatusSource>) -> impl IntoResponse {
    let snapshot = source.snapshot().await;
    let code = code_of(&snapshot);
    let headers = [
        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        (header::CACHE_CONTROL, "no-store"),
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'",
        ),
    ];
    (code, headers, html::render(&snapshot))
}
