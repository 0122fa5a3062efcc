//! Building a gate from its `gate_type` and `gate_params`: one match arm per type, and the startup error for a type nobody knows.
//!
//! `""` and `none` mean no gate. Go opens an always-open gate for any type
//! it does not know (a typo included); we refuse to start instead, naming
//! the known types, because a misspelt gate on a batch queue would
//! otherwise flood the pool it was meant to protect.

use super::aimd::AimdGate;
use super::composite::CompositeGate;
use super::constant::ConstantGate;
use super::contract::{DispatchGate, GateConfigError, GateEnv, GateOwner, GateParams};
use super::local_max_concurrency::LocalMaxConcurrencyGate;
use super::nested::InnerGates;
use super::tier_priority_admission::TierPriorityAdmissionGate;
use super::wait_on_refuse::WaitOnRefuseGate;
#[cfg(feature = "redis")]
use super::{redis_budget::RedisBudgetGate, redis_quota::RedisQuotaGate};
use std::sync::Arc;

/// Every `gate_type` this build knows, as the startup error lists them.
/// Types left out of a build by a cargo feature are still listed: such a
/// build refuses them by name instead of calling them unknown.
pub const GATE_TYPES: &[&str] = &[
    "constant",
    "composite",
    "wait-on-refuse",
    "tier-priority-admission",
    "local-max-concurrency",
    "redis",
    "redis-quota",
    "prometheus-saturation",
    "prometheus-budget",
    "prometheus-query",
    "endpoint-scrape",
    "aimd",
];

/// The gate a queue or pool config asks for; `None` for `""` and `none`.
pub fn build(
    gate_type: &str,
    params: &GateParams,
    owner: &GateOwner,
    env: &GateEnv,
) -> Result<Option<Arc<dyn DispatchGate>>, GateConfigError> {
    let inner = InnerGates { build, owner, env };
    let gate: Arc<dyn DispatchGate> = match gate_type {
        "" | "none" => return Ok(None),
        "constant" => Arc::new(ConstantGate),
        "composite" => Arc::new(CompositeGate::from_params(params, &inner)?),
        "wait-on-refuse" => Arc::new(WaitOnRefuseGate::from_params(params, &inner)?),
        "tier-priority-admission" => {
            Arc::new(TierPriorityAdmissionGate::from_params(params, &inner)?)
        }
        "local-max-concurrency" => Arc::new(LocalMaxConcurrencyGate::from_params(params)?),
        "aimd" => Arc::new(AimdGate::from_params(params, owner)?),
        #[cfg(feature = "redis")]
        "redis" => Arc::new(RedisBudgetGate::from_params(params, env)?),
        #[cfg(feature = "redis")]
        "redis-quota" => Arc::new(RedisQuotaGate::from_params(params, env)?),
        #[cfg(not(feature = "redis"))]
        "redis" | "redis-quota" => return Err(left_out(gate_type, "redis")),
        #[cfg(feature = "metric-gates")]
        metric if super::metric::TYPES.contains(&metric) => {
            super::metric::build(metric, params, owner, env)?
        }
        #[cfg(not(feature = "metric-gates"))]
        "prometheus-saturation" | "prometheus-budget" | "prometheus-query" | "endpoint-scrape" => {
            return Err(left_out(gate_type, "metric-gates"));
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

/// The refusal of a type this build left out with its cargo `feature`.
#[cfg_attr(all(feature = "redis", feature = "metric-gates"), allow(dead_code))]
fn left_out(gate_type: &str, feature: &str) -> GateConfigError {
    GateConfigError(format!(
        "{gate_type} gate: this build lacks the `{feature}` feature"
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

    fn redis_params() -> GateParams {
        let params = serde_json::json!({ "address": "127.0.0.1:1", "limit": 1 });
        params.as_object().cloned().unwrap_or_default()
    }

    #[cfg(feature = "redis")]
    #[test]
    fn the_redis_types_are_built_without_connecting() {
        for gate_type in ["redis", "redis-quota"] {
            let env = GateEnv::default();
            let gate = build(gate_type, &redis_params(), &GateOwner::pool("p"), &env);
            assert!(gate.unwrap().is_some(), "{gate_type}");
            assert!(env.redis.is_empty(), "{gate_type} connected at build");
        }
    }

    /// Tests run with the default features, so the arm that uses this
    /// text (without `redis`) is only compiled by the no-default build.
    #[test]
    fn a_type_left_out_of_the_build_is_refused_naming_its_feature() {
        assert_eq!(
            left_out("redis-quota", "redis").0,
            "redis-quota gate: this build lacks the `redis` feature"
        );
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
            left_out("prometheus-query", "metric-gates").0,
            "prometheus-query gate: this build lacks the `metric-gates` feature"
        );
        #[cfg(not(feature = "metric-gates"))]
        assert_eq!(
            build_type("prometheus-query").unwrap_err(),
            left_out("prometheus-query", "metric-gates")
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
