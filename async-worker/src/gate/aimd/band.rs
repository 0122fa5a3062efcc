//! One band's congestion window (TCP-shaped: slow start, congestion avoidance, a multiplicative decrease once per flight, a full close for a `Retry-After`), and the ladder that couples the bands as the gateway's strict-priority dispatch does.
//!
//! Bands are ranked as the `tier-priority` lanes (0 `reserved/interactive`
//! first … 5 `overflow/batch`): saturation reaches the lower bands first
//! and climbs. So a capacity refusal in one band decreases it and every
//! band below it (which inherit its close), and holds growth in the bands
//! above it; an accept in one band clears the holds of the bands above it
//! that were set before it was sent (it proves room below them).
//!
//! Answers arrive out of order with respect to sends, so each event is
//! weighed by its send time: a refusal sent before a band's last decrease
//! belongs to the congestion already acted on (one decrease per flight,
//! TCP's recovery point), and neither grows the window nor decreases it
//! again.

use super::config::AimdConfig;
use crate::gate::contract::{GatewayOutcome, OutcomeKind};
use crate::merge_policy::{LANES, lane_key};
use crate::metrics::{AIMD_INFLIGHT, AIMD_SSTHRESH, AIMD_WINDOW};
use metrics::Gauge;
use tokio::time::Instant;

/// The gentle decrease of the soft signals (queue time past twice the
/// target, a TTL expiry in the gateway's queue).
const GENTLE_DECREASE: f64 = 0.9;

/// One band's window and what it has seen.
#[derive(Debug)]
pub(super) struct Band {
    /// 0 is served first by the gateway.
    pub rank: usize,
    pub window: f64,
    pub ssthresh: f64,
    pub inflight: usize,
    last_decrease: Option<Instant>,
    closed_until: Option<Instant>,
    /// Growth is held until then, after congestion below this band.
    hold_until: Option<Instant>,
    /// When the evidence of that hold arrived.
    hold_set_at: Option<Instant>,
    gauges: [Gauge; 3],
}

/// Whether a request sent at `sent_at` was sent after `event` (always,
/// when there was none).
fn sent_after(sent_at: Instant, event: Option<Instant>) -> bool {
    event.is_none_or(|event| sent_at > event)
}

/// Whether `until` is still ahead of `now`.
fn ahead(until: Option<Instant>, now: Instant) -> bool {
    until.is_some_and(|until| now < until)
}

/// The `band` label of a lane: `reserved/interactive` … `overflow/batch`.
pub(super) fn band_label(lane: usize) -> String {
    lane_key(lane).replacen('-', "/", 1)
}

impl Band {
    fn new(rank: usize, config: &AimdConfig, pool: &str) -> Band {
        let labels = [("pool_name", pool.to_owned()), ("band", band_label(rank))];
        Band {
            rank,
            window: config.min_window,
            ssthresh: config.max_window,
            inflight: 0,
            last_decrease: None,
            closed_until: None,
            hold_until: None,
            hold_set_at: None,
            gauges: [AIMD_WINDOW, AIMD_SSTHRESH, AIMD_INFLIGHT]
                .map(|name| metrics::gauge!(name, &labels)),
        }
    }

    /// Closed (a `Retry-After`) or full.
    pub fn is_shut(&self, now: Instant) -> bool {
        ahead(self.closed_until, now) || self.inflight as f64 >= self.window
    }

    /// The free fraction of an open band, `None` when shut.
    pub fn free_fraction(&self, now: Instant) -> Option<f64> {
        (!self.is_shut(now)).then(|| (self.window - self.inflight as f64) / self.window)
    }

    /// Publishes the band's state.
    pub fn export(&self) {
        let [window, ssthresh, inflight] = &self.gauges;
        window.set(self.window);
        ssthresh.set(self.ssthresh);
        inflight.set(self.inflight as f64);
    }

    /// A multiplicative decrease, leaving slow start; at most once per
    /// flight (nothing for evidence sent before the last decrease).
    fn decrease(&mut self, config: &AimdConfig, factor: f64, sent_at: Instant, now: Instant) {
        if !sent_after(sent_at, self.last_decrease) {
            return;
        }
        self.ssthresh = config.min_window.max(self.window * factor);
        self.window = self.ssthresh;
        self.last_decrease = Some(now);
    }

    /// Holds growth for `config.hold` from `now` (never shortening a hold).
    fn hold(&mut self, config: &AimdConfig, now: Instant) {
        let until = now + config.hold;
        if self.hold_until.is_none_or(|held| until > held) {
            self.hold_until = Some(until);
        }
        self.hold_set_at = Some(now);
    }

    /// Closed until `until` at least, reopening from the floor.
    fn close(&mut self, config: &AimdConfig, until: Instant) {
        if self.closed_until.is_none_or(|closed| until > closed) {
            self.closed_until = Some(until);
        }
        self.window = config.min_window;
    }

    /// What an accept does to this band's own window.
    fn accepted(&mut self, config: &AimdConfig, outcome: &GatewayOutcome, now: Instant) {
        let target = config.queue_duration_target;
        let queued = outcome.queue_duration.unwrap_or_default();
        if !target.is_zero() && queued >= target * 2 {
            self.decrease(config, GENTLE_DECREASE, outcome.sent_at, now);
        } else if (!target.is_zero() && queued >= target)
            || ahead(self.hold_until, now)
            || !sent_after(outcome.sent_at, self.last_decrease)
        {
            // Held: queueing past the target, congestion climbing from
            // below, or an answer to a send from before the last decrease.
        } else if self.window < self.ssthresh {
            self.window = config.max_window.min(self.window + config.increase);
        } else {
            self.window = config
                .max_window
                .min(self.window + config.increase / self.window);
        }
    }

    /// The advertised headroom caps the window at `inflight + headroom`
    /// (never under the floor), whatever the outcome.
    fn cap_at_headroom(&mut self, config: &AimdConfig, headroom: f64) {
        let ceiling = config.min_window.max(self.inflight as f64 + headroom);
        if self.window > ceiling {
            self.window = ceiling;
            self.ssthresh = self.ssthresh.min(ceiling);
        }
    }
}

/// Every band of one gate, created at the floor when first seen.
#[derive(Debug, Default)]
pub(super) struct Bands {
    lanes: [Option<Band>; LANES],
}

impl Bands {
    /// The band of `lane`, created at the floor in slow start.
    pub fn band(&mut self, lane: usize, config: &AimdConfig, pool: &str) -> &mut Band {
        let lane = lane.min(LANES - 1);
        self.lanes[lane].get_or_insert_with(|| Band::new(lane, config, pool))
    }

    pub fn existing(&self) -> impl Iterator<Item = &Band> {
        self.lanes.iter().flatten()
    }

    /// The widest open fraction (a request of that band can still pass);
    /// 1 with no band yet, 0 when every band is shut.
    pub fn budget(&self, now: Instant) -> f64 {
        let mut bands = self.existing().peekable();
        if bands.peek().is_none() {
            return 1.0;
        }
        bands
            .filter_map(|band| band.free_fraction(now))
            .fold(0.0, f64::max)
    }

    /// What one outcome of a request in `lane` does to every band.
    pub fn observe(
        &mut self,
        lane: usize,
        config: &AimdConfig,
        pool: &str,
        outcome: &GatewayOutcome,
    ) {
        let now = Instant::now();
        let band = self.band(lane, config, pool);
        let rank = band.rank;
        if let Some(headroom) = outcome.band_headroom {
            band.cap_at_headroom(config, headroom);
        }
        match outcome.kind() {
            OutcomeKind::Accepted => {
                band.accepted(config, outcome, now);
                for higher in self.others(rank).filter(|b| b.rank < rank) {
                    if ahead(higher.hold_until, now)
                        && sent_after(outcome.sent_at, higher.hold_set_at)
                    {
                        higher.hold_until = None;
                    }
                }
            }
            OutcomeKind::Capacity => {
                // Decide "new congestion?" before this decrease resets the
                // band's last-decrease time: a late answer from a flight we
                // already reacted to must leave the other bands alone.
                let new_event = sent_after(outcome.sent_at, band.last_decrease);
                band.decrease(config, config.decrease_factor, outcome.sent_at, now);
                if let Some(retry_after) = outcome.retry_after.filter(|ra| !ra.is_zero()) {
                    band.close(config, now + retry_after);
                }
                let closed = band.closed_until.filter(|until| now < *until);
                if new_event {
                    for other in self.others(rank) {
                        if other.rank > rank {
                            other.decrease(config, config.decrease_factor, outcome.sent_at, now);
                            if let Some(until) = closed
                                && other.closed_until.is_none_or(|theirs| until > theirs)
                            {
                                other.close(config, until);
                            }
                        } else {
                            other.hold(config, now);
                        }
                    }
                }
            }
            OutcomeKind::TtlExpired => {
                let new_event = sent_after(outcome.sent_at, band.last_decrease);
                band.decrease(config, GENTLE_DECREASE, outcome.sent_at, now);
                if new_event {
                    for higher in self.others(rank).filter(|b| b.rank < rank) {
                        higher.hold(config, now);
                    }
                }
            }
            // A cost signal, or none about capacity.
            OutcomeKind::Evicted | OutcomeKind::RejectedOther | OutcomeKind::Error => {}
        }
        self.existing().for_each(Band::export);
    }

    /// Every band but the one of `rank`.
    fn others(&mut self, rank: usize) -> impl Iterator<Item = &mut Band> {
        self.lanes
            .iter_mut()
            .flatten()
            .filter(move |b| b.rank != rank)
    }
}
