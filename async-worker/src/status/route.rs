//! `GET /status` and `GET /status.json` on the health port: a fresh snapshot as a page or as JSON, 200 when Redis was read, 503 when not (both still show this replica).
//!
//! Only `GET` (and `HEAD`) is routed: there is nothing to post, and the
//! page has no form or script. Mutations are the admin CLI's, under
//! Redis's own ACL.

use super::{Snapshot, StatusSource, html, json};
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

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

async fn status_json(State(source): State<StatusSource>) -> impl IntoResponse {
    let snapshot = source.snapshot().await;
    let headers = [
        (header::CONTENT_TYPE, "application/json"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    (code_of(&snapshot), headers, json::render(&snapshot))
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
