//! The worker runtime: drains claim-protected queues through an application `Handler`.
//!
//! The runtime depends only on the [`claim_core::ClaimStore`] trait; the
//! binary and tests choose a backend (Redis in production, memory for tests
//! and single-process use). See [`Runtime`] for the moving parts.
//!
//! Features: `cli` (default) is everything the processor binary needs;
//! without it the library is the runtime alone (no HTTP server, CLI parser
//! or store). `http-handler` adds [`http_handler`] (the gateway client),
//! `serve` the metrics and health endpoints, `test-support` the stand-ins
//! the tests and the chaos run borrow.

pub mod admin;
pub mod clock;
pub mod config;
pub mod gate;
pub mod handler;
#[cfg(feature = "http-handler")]
pub mod http_handler;
pub mod metrics;
pub mod runtime;
#[cfg(feature = "serve")]
pub mod serve;
pub mod status;
#[cfg(feature = "test-support")]
pub mod test_support;

pub use clock::{SystemClock, TokioClock};
pub use config::{QueueSpec, RuntimeConfig};
pub use gate::{Gate, GateDecision, OpenGate};
pub use handler::{Handler, HandlerOutcome, Request};
pub use runtime::{RunReport, Runtime};
