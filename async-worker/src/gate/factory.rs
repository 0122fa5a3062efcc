//! Building a gate from its `gate_type` and `gate_params`: the registry of gate types, each a name and its constructor, and the startup error for a type nobody knows.
//!
//! Adding a gate type is its own file and one line in [`GATE_TYPES`].
//! `""` and `none` mean no gate. Go opens an always-open gate for any type
//! it does not know (a typo included); we refuse to start instead, naming
//! the known types, because a misspelt gate on a batch queue would
//! otherwise flood the pool it was meant to protect.

use super::aimd::AimdGate;
use super::composite::CompositeGate;
use super::constant::ConstantGate;
use super::contract::{DispatchGate, GateConfigError, GateEnv, GateOwner, GateParams};
use super::local_max_concurrency::LocalMaxConcurrencyGate;
#[cfg(feature = "metric-gates")]
use super::metric;
use super::nested::{Built, GateBuild};
use super::params::Params;
use super::tier_priority_admission::TierPriorityAdmissionGate;
use super::wait_on_refuse::WaitOnRefuseGate;
#[cfg(feature = "redis")]
use super::{redis_budget::RedisBudgetGate, redis_quota::RedisQuotaGate};
use std::sync::Arc;

/// How one gate type is built.
pub type Constructor = fn(&GateBuild) -> Built;

/// `$build` in a build with the cargo `$feature`; in one without, the
/// refusal naming the feature.
macro_rules! with_feature {
    ($feature:literal, $build:expr) => {{
        #[cfg(feature = $feature)]
        let build: Constructor = $build;
        #[cfg(not(feature = $feature))]
        let build: Constructor = |b| Err(left_out(b.params.gate, $feature));
        build
    }};
}

/// Every `gate_type` this build knows, in the order the startup error lists
/// them. Types left out of a build by a cargo feature are still listed:
/// such a build refuses them by name instead of calling them unknown.
#[rustfmt::skip]
pub const GATE_TYPES: &[(&str, Constructor)] = &[
    ("constant", |_| Ok(Arc::new(ConstantGate))),
    ("composite", |b| shared(CompositeGate::from_params(b))),
    ("wait-on-refuse", |b| shared(WaitOnRefuseGate::from_params(b))),
    ("tier-priority-admission", |b| shared(TierPriorityAdmissionGate::from_params(b))),
    ("local-max-concurrency", |b| shared(LocalMaxConcurrencyGate::from_params(b.params))),
    ("redis", with_feature!("redis", |b| shared(RedisBudgetGate::from_params(b.params, b.env)))),
    ("redis-quota", with_feature!("redis", |b| shared(RedisQuotaGate::from_params(b.params, b.env)))),
    ("prometheus-saturation", with_feature!("metric-gates", metric::saturation)),
    ("prometheus-budget", with_feature!("metric-gates", metric::budget)),
    ("prometheus-query", with_feature!("metric-gates", metric::query)),
    ("endpoint-scrape", with_feature!("metric-gates", metric::endpoint_scrape)),
    ("aimd", |b| shared(AimdGate::from_params(b.params, b.owner))),
];

/// The gate a queue or pool config asks for; `None` for `""` and `none`.
pub fn build(
    gate_type: &str,
    params: &GateParams,
    owner: &GateOwner,
    env: &GateEnv,
) -> Result<Option<Arc<dyn DispatchGate>>, GateConfigError> {
    if matches!(gate_type, "" | "none") {
        return Ok(None);
    }
    let Some((gate_type, constructor)) = GATE_TYPES.iter().find(|(name, _)| *name == gate_type)
    else {
        let known: Vec<&str> = GATE_TYPES.iter().map(|(name, _)| *name).collect();
        return Err(GateConfigError(format!(
            "unknown gate_type {gate_type:?}: the known types are {}, or \"\"/\"none\" for no gate",
            known.join(", ")
        )));
    };
    let params = Params::new(gate_type, params);
    constructor(&GateBuild {
        params,
        owner,
        env,
        factory: build,
    })
    .map(Some)
}

/// A built gate, shared.
fn shared<G: DispatchGate>(gate: Result<G, GateConfigError>) -> Built {
    Ok(Arc::new(gate?))
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
        for (known, _) in GATE_TYPES {
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
            assert!(GATE_TYPES.iter().any(|(name, _)| *name == gate_type));
            let gate = build(gate_type, &params, &owner, &env);
            assert!(matches!(gate, Ok(Some(_))), "{gate_type}: {gate:?}");
        }
    }
}
