//! The `local-max-concurrency` gate: at most `limit` requests at once through this gate in this process, refused when full (`classifying`) or waited for (`blocking`).
//!
//! The count is per gate instance, not shared with other replicas or with
//! another gate of the same configuration. A slot is a permit of a
//! semaphore of `limit` permits: taking one is the reservation, and the
//! release pushed with it gives it back. The permit lives inside the
//! release, so it goes back exactly once however the release list ends
//! (run, or dropped unrun).
//!
//! Blocking mode awaits a permit for as long as the caller lets it; the
//! caller bounds the wait by dropping the apply at its deadline, and a
//! dropped wait holds no permit.

use super::contract::{
    DispatchGate, GateConfigError, GateError, GateRequest, Release, Releases, Verdict,
};
use super::params::Params;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// What the gate does with a request when every slot is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatingMode {
    /// Refuse it (the default).
    Classifying,
    /// Wait for a slot.
    Blocking,
}

/// `gate_type: "local-max-concurrency"`.
#[derive(Debug)]
pub struct LocalMaxConcurrencyGate {
    /// The number of slots (the configured limit, see [`Self::new`]).
    limit: usize,
    mode: GatingMode,
    slots: Arc<Semaphore>,
}

impl LocalMaxConcurrencyGate {
    /// A gate of `limit` slots (`limit` > 0). A limit above the most
    /// permits a Tokio semaphore holds (2^61 − 1 on 64-bit) is capped
    /// there: no process holds that many requests, so it never fills
    /// either way.
    pub fn new(limit: u64, mode: GatingMode) -> Self {
        let limit = usize::try_from(limit)
            .unwrap_or(usize::MAX)
            .min(Semaphore::MAX_PERMITS);
        LocalMaxConcurrencyGate {
            limit,
            mode,
            slots: Arc::new(Semaphore::new(limit)),
        }
    }

    /// `limit` (required, an integer above 0) and `gating_mode`
    /// (`classifying`, the default, or `blocking`).
    pub fn from_params(params: Params) -> Result<Self, GateConfigError> {
        let limit = params.get("limit", 0)?;
        let Ok(limit @ 1..) = u64::try_from(limit) else {
            return Err(GateConfigError(format!(
                "local-max-concurrency limit must be greater than 0, got {limit}"
            )));
        };
        let mode = match params.text("gating_mode", "classifying").as_str() {
            "classifying" => GatingMode::Classifying,
            "blocking" => GatingMode::Blocking,
            other => {
                return Err(GateConfigError(format!(
                    "local-max-concurrency gating_mode must be either 'blocking' or 'classifying', got {other:?}"
                )));
            }
        };
        Ok(LocalMaxConcurrencyGate::new(limit, mode))
    }

    /// Requests holding a slot now.
    pub fn inflight(&self) -> usize {
        self.limit - self.slots.available_permits()
    }
}

/// The release that gives `slot` back.
fn freeing(slot: OwnedSemaphorePermit) -> Release {
    Box::new(move || {
        drop(slot);
        Box::pin(async {})
    })
}

#[async_trait::async_trait]
impl DispatchGate for LocalMaxConcurrencyGate {
    /// `(limit − inflight) / limit`.
    async fn budget(&self) -> f64 {
        self.slots.available_permits() as f64 / self.limit as f64
    }

    async fn apply(
        &self,
        _request: &mut GateRequest<'_>,
        releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        let slot = match self.mode {
            GatingMode::Classifying => match self.slots.clone().try_acquire_owned() {
                Ok(slot) => slot,
                Err(_full) => return Ok(Verdict::Refuse),
            },
            // The semaphore is never closed, so this only ends with a slot.
            GatingMode::Blocking => {
                self.slots
                    .clone()
                    .acquire_owned()
                    .await
                    .map_err(|e| GateError::Source {
                        context: "local-max-concurrency slot".to_owned(),
                        source: Box::new(e),
                    })?
            }
        };
        releases.push(freeing(slot));
        Ok(Verdict::Continue)
    }
}

#[cfg(test)]
#[path = "local_max_concurrency_tests.rs"]
mod tests;
