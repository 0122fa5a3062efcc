//! `GET /status` on the health port: the page of a fresh snapshot, 200 when Redis was read, 503 when not (the page still shows this replica).
//!
//! Only `GET` (and `HEAD`) is routed: there is nothing to post, and the
//! page has no form or script. Mutations are the admin CLI's, under
//! Redis's own ACL.

use super::{StatusSource, html};
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

/// The `/status` route over `source`.
pub fn status_router(source: StatusSource) -> Router {
    Router::new()
        .route("/status", get(status))
        .with_state(source)
}

async fn status(State(source): State<StatusSource>) -> impl IntoResponse {
    let snapshot = source.snapshot().await;
    let code = if snapshot.store.is_ok() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
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
