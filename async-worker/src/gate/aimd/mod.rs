//! The `aimd` gate: per-band dispatch windows sized from the gateway's own answers (slow start, additive increase, multiplicative decrease, `Retry-After` closes), instead of from scraped metrics.
//!
//! One window per band, a band per `tier-priority` lane (classification ×
//! tier; see [`band`] for the ladder coupling them). `Apply` lets a request
//! through while its band is open and has fewer requests in flight than its
//! window, counting it until its release; a shut band makes a `reserved`
//! request wait (parking is a privilege of traffic that cannot be shed) and
//! refuses any other, which goes back to its queue. Each gateway call's
//! outcome reaches the gate through [`DispatchGate::observe`]; the
//! processor routes it from the HTTP handler to the request's pool gate.
//!
//! A release, and every outcome, wakes one parked request
//! ([`DispatchGate::woken`]): the pool worker re-asks at once instead of
//! after its pause (which still bounds the wait when a wake belongs to
//! another band's request).
//!
//! Gauges `aimd_window`, `aimd_ssthresh`, `aimd_inflight` carry the owning
//! pool's name and the band (`reserved/interactive` … `overflow/batch`).

mod band;
mod config;

pub use config::AimdConfig;

use super::contract::{
    DispatchGate, GateConfigError, GateError, GateOwner, GateRequest, GatewayOutcome, Releases,
    Verdict,
};
use super::params::Params;
use crate::merge_policy::lane_of;
use band::Bands;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;
use tokio::time::Instant;

/// `gate_type: "aimd"`.
#[derive(Debug, Clone)]
pub struct AimdGate {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    config: AimdConfig,
    /// The `pool_name` of the gauges: the owner's pool, never a param.
    pool: String,
    bands: Mutex<Bands>,
    wake: Notify,
}

/// A band's state as the gauges show it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandState {
    pub window: f64,
    pub ssthresh: f64,
    pub inflight: usize,
}

impl AimdGate {
    pub fn new(config: AimdConfig, owner: &GateOwner) -> Self {
        AimdGate {
            shared: Arc::new(Shared {
                config,
                pool: owner.pool_name.clone(),
                bands: Mutex::default(),
                wake: Notify::new(),
            }),
        }
    }

    /// See [`AimdConfig::from_params`].
    pub fn from_params(params: Params, owner: &GateOwner) -> Result<Self, GateConfigError> {
        Ok(AimdGate::new(AimdConfig::from_params(params)?, owner))
    }

    /// The state of band `band` (`overflow/batch`), once a request of it was seen.
    pub fn band(&self, band: &str) -> Option<BandState> {
        let bands = self.shared.lock();
        let lane = (0..crate::merge_policy::LANES).find(|&l| band::band_label(l) == band)?;
        bands
            .existing()
            .find(|b| b.rank == lane)
            .map(|b| BandState {
                window: b.window,
                ssthresh: b.ssthresh,
                inflight: b.inflight,
            })
    }

    fn lane(&self, labels: &BTreeMap<String, String>) -> usize {
        lane_of(labels, &self.shared.config.tier_label)
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Bands> {
        // The state stays consistent across a panic elsewhere: every update
        // is a few assignments.
        self.bands
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Frees one slot of `lane` and wakes one parked request.
    fn release(&self, lane: usize) {
        {
            let mut bands = self.lock();
            let band = bands.band(lane, &self.config, &self.pool);
            band.inflight = band.inflight.saturating_sub(1);
            band.export();
        }
        self.wake.notify_one();
    }
}

#[async_trait::async_trait]
impl DispatchGate for AimdGate {
    /// The widest open fraction over the bands, `(window − inflight) /
    /// window`; 1 before any request, 0 when every band is shut.
    async fn budget(&self) -> f64 {
        self.shared.lock().budget(Instant::now())
    }

    async fn apply(
        &self,
        request: &mut GateRequest<'_>,
        releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        let lane = self.lane(request.labels);
        {
            let shared = &self.shared;
            let mut bands = shared.lock();
            let band = bands.band(lane, &shared.config, &shared.pool);
            if band.is_shut(Instant::now()) {
                let reserved =
                    request.labels.get("classification").map(String::as_str) == Some("reserved");
                return Ok(if reserved {
                    Verdict::Wait
                } else {
                    Verdict::Refuse
                });
            }
            band.inflight += 1;
            band.export();
        }
        let shared = self.shared.clone();
        releases.push(Box::new(move || {
            shared.release(lane);
            Box::pin(async {})
        }));
        Ok(Verdict::Continue)
    }

    fn observe(&self, labels: &BTreeMap<String, String>, outcome: &GatewayOutcome) {
        let shared = &self.shared;
        shared
            .lock()
            .observe(self.lane(labels), &shared.config, &shared.pool, outcome);
        shared.wake.notify_one();
    }

    async fn woken(&self) {
        self.shared.wake.notified().await;
    }
}

#[cfg(test)]
#[path = "aimd_tests.rs"]
mod tests;
