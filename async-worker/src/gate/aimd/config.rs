//! The `aimd` gate's `gate_params`, their defaults, and the startup errors Go refuses bad ones with.
//!
//! Go compares with `<` and `<=`, so a `NaN` passes every check, as here.

use crate::gate::contract::GateConfigError;
use crate::gate::params::{Nanos, Params, go_float};
use crate::go_duration::go_duration_string;
use std::time::Duration;

const NANOS_PER_SEC: i64 = 1_000_000_000;

/// The tunables of every band's window.
#[derive(Debug, Clone, PartialEq)]
pub struct AimdConfig {
    /// The floor (`min_window`, 1, at least 1): one request always probes.
    pub min_window: f64,
    /// The cap (`max_window`, 256, at least `min_window`); a new band's
    /// slow-start threshold.
    pub max_window: f64,
    /// The additive step (`increase`, 1, > 0): per accept in slow start,
    /// divided by the window above the threshold.
    pub increase: f64,
    /// The multiplicative decrease on a capacity refusal
    /// (`decrease_factor`, 0.5, in (0, 1)).
    pub decrease_factor: f64,
    /// How long a band holds its growth after congestion below it
    /// (`hold_duration`, `1s`, ≥ 0).
    pub hold: Duration,
    /// The label carrying the tier (`tier_label`, `tier`).
    pub tier_label: String,
    /// Queue time in the gateway past which an accept holds the window,
    /// and past twice which it shrinks it (`queue_duration_target`, `0`:
    /// off, ≥ 0).
    pub queue_duration_target: Duration,
}

impl Default for AimdConfig {
    fn default() -> Self {
        AimdConfig {
            min_window: 1.0,
            max_window: 256.0,
            increase: 1.0,
            decrease_factor: 0.5,
            hold: Duration::from_secs(1),
            tier_label: "tier".to_owned(),
            queue_duration_target: Duration::ZERO,
        }
    }
}

impl AimdConfig {
    /// Reads `params` as Go's factory does, in its order.
    pub fn from_params(params: Params) -> Result<Self, GateConfigError> {
        let fail = |text: String| Err(GateConfigError(text));
        let g = go_float;
        let min_window = params.get("min_window", 1.0)?;
        if min_window < 1.0 {
            return fail(format!(
                "aimd min_window must be at least 1, got {}",
                g(min_window)
            ));
        }
        let max_window = params.get("max_window", 256.0)?;
        if max_window < min_window {
            return fail(format!(
                "aimd max_window ({}) must be at least min_window ({})",
                g(max_window),
                g(min_window)
            ));
        }
        let increase = params.get("increase", 1.0)?;
        if increase <= 0.0 {
            return fail(format!(
                "aimd increase must be positive, got {}",
                g(increase)
            ));
        }
        let decrease_factor = params.get("decrease_factor", 0.5)?;
        if decrease_factor <= 0.0 || decrease_factor >= 1.0 {
            return fail(format!(
                "aimd decrease_factor must be in (0, 1), got {}",
                g(decrease_factor)
            ));
        }
        Ok(AimdConfig {
            min_window,
            max_window,
            increase,
            decrease_factor,
            hold: non_negative(params, "hold_duration", NANOS_PER_SEC)?,
            tier_label: params.text("tier_label", "tier"),
            queue_duration_target: non_negative(params, "queue_duration_target", 0)?,
        })
    }
}

/// A duration param Go refuses when negative.
fn non_negative(params: Params, key: &str, default: i64) -> Result<Duration, GateConfigError> {
    let Nanos(nanos) = params.get(key, Nanos(default))?;
    u64::try_from(nanos).map(Duration::from_nanos).map_err(|_| {
        GateConfigError(format!(
            "aimd {key} must not be negative, got {}",
            go_duration_string(nanos)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: serde_json::Value) -> Result<AimdConfig, GateConfigError> {
        let given = crate::gate::scripted::params(value);
        AimdConfig::from_params(Params::new("aimd", &given))
    }

    fn error(value: serde_json::Value) -> String {
        read(value).expect_err("a startup error").0
    }

    #[test]
    fn absent_params_are_gos_defaults_and_strings_are_read_like_numbers() {
        assert_eq!(read(json!({})).unwrap(), AimdConfig::default());
        let given = read(json!({
            "min_window": "2", "max_window": 8, "increase": "0.5", "decrease_factor": "0.25",
            "hold_duration": "250ms", "tier_label": "lane", "queue_duration_target": "2s"
        }))
        .unwrap();
        assert_eq!(
            given,
            AimdConfig {
                min_window: 2.0,
                max_window: 8.0,
                increase: 0.5,
                decrease_factor: 0.25,
                hold: Duration::from_millis(250),
                tier_label: "lane".to_owned(),
                queue_duration_target: Duration::from_secs(2),
            }
        );
        let zero_hold = read(json!({"hold_duration": "0"})).unwrap();
        assert_eq!(zero_hold.hold, Duration::ZERO);
    }

    #[test]
    fn every_bad_param_is_refused_naming_the_param_the_value_and_what_is_accepted() {
        let cases = [
            (
                json!({"min_window": 0.5}),
                "aimd min_window must be at least 1, got 0.5",
            ),
            (
                json!({"min_window": "4", "max_window": "2"}),
                "aimd max_window (2) must be at least min_window (4)",
            ),
            (
                json!({"increase": 0}),
                "aimd increase must be positive, got 0",
            ),
            (
                json!({"increase": "-1"}),
                "aimd increase must be positive, got -1",
            ),
            (
                json!({"decrease_factor": 1}),
                "aimd decrease_factor must be in (0, 1), got 1",
            ),
            (
                json!({"decrease_factor": "0"}),
                "aimd decrease_factor must be in (0, 1), got 0",
            ),
            (
                json!({"hold_duration": "-1.5s"}),
                "aimd hold_duration must not be negative, got -1.5s",
            ),
            (
                json!({"queue_duration_target": "-1m"}),
                "aimd queue_duration_target must not be negative, got -1m0s",
            ),
            (
                json!({"min_window": "x"}),
                "aimd gate: parameter 'min_window' cannot be \"x\": \
                 expected a number, or a string holding one (\"x\" is not a number)",
            ),
            (
                json!({"max_window": true}),
                "aimd gate: parameter 'max_window' cannot be true: \
                 expected a number, or a string holding one",
            ),
            (
                json!({"hold_duration": 5}),
                "aimd gate: parameter 'hold_duration' cannot be 5: \
                 expected a Go duration string such as \"1m\" or \"500ms\" \
                 (time: missing unit in duration \"5\")",
            ),
        ];
        for (params, text) in cases {
            assert_eq!(error(params.clone()), text, "{params}");
        }
    }

    #[test]
    fn a_nan_passes_the_checks_as_it_does_in_go() {
        let config = read(json!({"max_window": "NaN"})).unwrap();
        assert!(config.max_window.is_nan());
    }
}
