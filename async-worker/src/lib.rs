//! The worker runtime: drains claim-protected queues through an application `Handler`.
//!
//! The runtime depends only on the [`claim_core::ClaimStore`] trait; the
//! binary and tests choose a backend (Redis in production, memory for tests
//! and single-process use). See [`Runtime`] for the moving parts.

pub mod clock;
pub mod config;
pub mod demo;
pub mod gate;
pub mod handler;
pub mod http_handler;
pub mod metrics;
pub mod runtime;
pub mod serve;
pub mod settings;

pub use clock::TokioClock;
pub use config::{QueueSpec, RuntimeConfig};
pub use gate::{Gate, GateDecision, OpenGate};
pub use handler::{Handler, HandlerOutcome, Request};
pub use runtime::{RunReport, Runtime};
