//! The worker runtime: drains claim-protected queues through an application `Handler`.
//!
//! The runtime depends only on the [`claim_core::ClaimStore`] trait; the
//! application picks a store (Redis in production, memory for tests and
//! single-process use), builds a [`Runtime`] with [`Runtime::builder`] and
//! runs it. Everything an application names is in [`prelude`].
//!
//! The shortest program, on the memory store: a typed handler
//! ([`handler_fn`]) receives the deserialized job and answers with a value
//! that becomes the success record.
//!
//! ```
//! use async_worker::prelude::*;
//! use std::time::Duration;
//!
//! #[derive(serde::Deserialize)]
//! struct Add { a: i64, b: i64 }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = MemoryStore::new(StoreConfig::default());
//! let runtime = Runtime::builder(store.clone())
//!     .queue("sums")
//!     .poll_interval(Duration::from_millis(10))
//!     .handler(handler_fn(|job: Add, _cx: JobContext| async move {
//!         Ok::<_, std::convert::Infallible>(job.a + job.b)
//!     }))
//!     .build()?;
//!
//! // Push one job (as the Go producer enqueues it), run until its record lands.
//! store.push("sums", "job-1", serde_json::json!({"a": 2, "b": 3}), unix_now() + 60).await?;
//! let stop = CancellationToken::new();
//! let running = tokio::spawn(runtime.run(stop.clone()));
//! while store.results("result-list").await?.is_empty() {
//!     tokio::time::sleep(Duration::from_millis(10)).await;
//! }
//! stop.cancel();
//! running.await?;
//!
//! let records = store.results("result-list").await?;
//! let record: serde_json::Value = serde_json::from_slice(records[0].as_bytes())?;
//! assert_eq!(record["payload"], "5");
//! # Ok(())
//! # }
//! ```
//!
//! Features: `cli` (default) is everything the processor binary needs;
//! without it the library is the runtime alone (no HTTP server, CLI parser
//! or store). `memory` and `redis` put the stores in the prelude;
//! `http-handler` adds [`http_handler`] (the gateway client),
//! `metric-gates` the gates that read Prometheus or a scrape, `serve` the
//! metrics and health endpoints, `test-support` the stand-ins the tests and
//! the chaos run borrow, `otel` OpenTelemetry parentage (the request's span
//! continues the producer's trace; the gateway call's span is injected
//! into its headers) for a subscriber with an OpenTelemetry layer.

pub mod admin;
pub mod clock;
pub mod config;
pub mod gate;
pub mod go_duration;
pub mod handler;
#[cfg(feature = "http-handler")]
pub mod http_handler;
pub mod merge_policy;
pub mod metrics;
#[cfg(feature = "otel")]
mod otel;
pub mod prelude;
pub mod runtime;
#[cfg(feature = "serve")]
pub mod serve;
pub mod status;
#[cfg(feature = "test-support")]
pub mod test_support;
pub mod trace_context;
pub mod transform;
pub mod typed;

pub use clock::{SystemClock, TokioClock};
pub use config::{BuildError, PoolSpec, QueueSpec, RuntimeConfig};
pub use gate::{DispatchGate, GateRequest, Releases, Verdict};
pub use handler::{Handler, HandlerOutcome, Request};
pub use runtime::{IntoStore, RunReport, Runtime, RuntimeBuilder};
pub use typed::{HandlerFn, JobContext, handler_fn};
