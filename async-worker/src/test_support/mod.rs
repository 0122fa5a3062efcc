//! Stand-ins the tests and the chaos run borrow (feature `test-support`, never on by default).
//!
//! The processor binary's demo compiles the same files into itself (its
//! `demo` module includes them by path), so the demo and the tests share one
//! stand-in gateway and one scraper without either being default public API.

pub mod gate_probe;
pub mod gateway;
pub mod http_stub;
pub mod metric_sample;
pub mod payload_shape;
pub mod prometheus;
pub mod scrape;

pub use metric_sample::sample;
pub use scrape::{metric_sum, scrape};

/// Serves `app` on an ephemeral loopback port for as long as the runtime
/// runs; its address.
pub async fn serve_on_loopback(app: axum::Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}
