//! Building a gate from its `gate_type` and `gate_params`: one match arm per type, and the startup error for a type nobody knows.
//!
//! `""` and `none` mean no gate. Go opens an always-open gate for any type
//! it does not know (a typo included); we refuse to start instead, naming
//! the known types, because a misspelt gate on a batch queue would
//! otherwise flood the pool it was meant to protect.

use super::constant::ConstantGate;
use super::contract::{DispatchGate, GateConfigError, GateEnv, GateOwner, GateParams};
use std::sync::Arc;

/// Every `gate_type` this build knows, as the startup error lists them.
/// The metric types are known without the `metric-gates` feature too; such
/// a build refuses them by name instead of calling them unknown.
pub const GATE_TYPES: &[&str] = &[
    "constant",
    "prometheus-saturation",
    "prometheus-budget",
    "prometheus-query",
    "endpoint-scrape",
];

/// The gate a queue or pool config asks for; `None` for `""` and `none`.
pub fn build(
    gate_type: &str,
    params: &GateParams,
    owner: &GateOwner,
    env: &GateEnv,
) -> Result<Option<Arc<dyn DispatchGate>>, GateConfigError> {
    let _ = (params, owner, env);
    let gate: Arc<dyn DispatchGate> = match gate_type {
        "" | "none" => return Ok(None),
        "constant" => Arc::new(ConstantGate),
        #[cfg(feature = "metric-gates")]
        metric if super::metric::TYPES.contains(&metric) => {
            super::metric::build(metric, params, owner, env)?
        }
        #[cfg(not(feature = "metric-gates"))]
        "prometheus-saturation" | "prometheus-budget" | "prometheus-query" | "endpoint-scrape" => {
            return Err(lacks_feature(gate_type, "metric-gates"));
        }
        unknown => {
            return Err(GateConfigError(format!(
                "unknown gate_type {unknown:?}: the known types are {}, or \"\"/\"none\" for no gate",
                GATE_TYPES.join(", ")
            )));
        }
    };
    Ok(Some(gate))
}

/// A known type this build was compiled without.
#[cfg_attr(feature = "metric-gates", allow(dead_code))]
fn lacks_feature(gate_type: &str, feature: &str) -> GateConfigError {
    GateConfigError(format!(
        "{gate_type} gate type needs the `{feature}` feature, which this build lacks"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build_type(gate_type: &str) -> Result<Option<Arc<dyn DispatchGate>>, GateConfigError> {
        build(
            gate_type,
            &GateParams::new(),
            &GateOwner::pool("default"),
            &GateEnv::default(),
        )
    }

    #[test]
    fn empty_and_none_mean_no_gate() {
        assert!(build_type("").unwrap().is_none());
        assert!(build_type("none").unwrap().is_none());
    }

    #[tokio::test]
    async fn constant_is_always_open() {
        let gate = build_type("constant").unwrap().unwrap();
        assert_eq!(gate.budget().await, 1.0);
    }

    #[test]
    fn an_unknown_type_is_refused_naming_the_known_ones() {
        let error = build_type("constnat").unwrap_err();
        assert!(error.0.contains("\"constnat\""), "{error}");
        for known in GATE_TYPES {
            assert!(error.0.contains(known), "{error}");
        }
    }

    #[test]
    fn a_type_this_build_lacks_is_refused_naming_the_feature() {
        assert_eq!(
            lacks_feature("prometheus-query", "metric-gates").0,
            "prometheus-query gate type needs the `metric-gates` feature, which this build lacks"
        );
        #[cfg(not(feature = "metric-gates"))]
        assert_eq!(
            build_type("prometheus-query").unwrap_err(),
            lacks_feature("prometheus-query", "metric-gates")
        );
    }

    #[cfg(feature = "metric-gates")]
    #[test]
    fn every_metric_type_is_built_by_the_factory() {
        let env = GateEnv {
            prometheus_url: Some("http://127.0.0.1:9".into()),
            ..GateEnv::default()
        };
        let params = |pairs: &[(&str, &str)]| -> GateParams {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), (*v).into()))
                .collect()
        };
        let owner = GateOwner::pool("default");
        for (gate_type, params) in [
            ("prometheus-saturation", params(&[("pool", "p")])),
            ("prometheus-budget", params(&[("pool", "p")])),
            ("prometheus-query", params(&[("query", "up")])),
            (
                "endpoint-scrape",
                params(&[("url", "http://x/m"), ("metric", "m")]),
            ),
        ] {
            assert!(GATE_TYPES.contains(&gate_type));
            let gate = build(gate_type, &params, &owner, &env);
            assert!(matches!(gate, Ok(Some(_))), "{gate_type}: {gate:?}");
        }
    }
}
