//! Dispatch gates: the contract every gate type implements ([`contract`]), and the poll-time gate the runtime consults before claiming.

pub mod constant;
pub mod contract;
pub mod factory;
#[cfg(feature = "metric-gates")]
pub mod metric;
pub mod params;

pub use contract::{
    DispatchGate, GateConfigError, GateEnv, GateError, GateOwner, GateParams, GateRecord,
    GateRequest, Release, ReleaseFuture, Releases, Verdict, budget_only,
};

use async_trait::async_trait;

/// A gate's answer for one poll.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GateDecision {
    /// Dispatch up to this fraction (0.0..=1.0) of the batch size.
    Open(f64),
    /// Dispatch nothing now; entries stay pending, unclaimed.
    Closed,
}

/// Decides how much a queue may dispatch. A gate error is treated like a
/// closed gate: no claim is taken and the entries stay pending.
#[async_trait]
pub trait Gate: Send + Sync + 'static {
    async fn decide(&self, queue_id: &str) -> Result<GateDecision, String>;
}

/// The default gate: always fully open.
#[derive(Debug, Default, Clone, Copy)]
pub struct OpenGate;

#[async_trait]
impl Gate for OpenGate {
    async fn decide(&self, _queue_id: &str) -> Result<GateDecision, String> {
        Ok(GateDecision::Open(1.0))
    }
}

/// A shared gate is a gate (the builder takes `Arc<dyn Gate>` too).
#[async_trait]
impl<G: Gate + ?Sized> Gate for std::sync::Arc<G> {
    async fn decide(&self, queue_id: &str) -> Result<GateDecision, String> {
        (**self).decide(queue_id).await
    }
}
