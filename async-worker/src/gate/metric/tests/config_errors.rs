//! Every startup error of the metric gates: Go's checks in Go's words, and a bad value named with its gate, parameter and what is accepted.

use super::*;
use crate::gate::contract::GateConfigError;
use serde_json::json;

fn build_error(gate_type: &str, value: serde_json::Value, env: &GateEnv) -> String {
    let owner = GateOwner::pool("default");
    match build(gate_type, &params(value), &owner, env) {
        Err(GateConfigError(text)) => text,
        Ok(gate) => panic!("{gate_type} built: {gate:?}"),
    }
}

fn with_prometheus() -> GateEnv {
    env("http://127.0.0.1:9", Duration::ZERO)
}

#[test]
fn the_prometheus_types_refuse_to_start_without_a_prometheus_url() {
    for gate_type in [
        "prometheus-saturation",
        "prometheus-budget",
        "prometheus-query",
    ] {
        for env in [GateEnv::default(), env("", Duration::ZERO)] {
            let error = build_error(gate_type, json!({"pool": "p", "query": "up"}), &env);
            assert_eq!(
                error,
                format!("{gate_type} gate type requires --prometheus-url flag to be set")
            );
        }
    }
}

#[test]
fn the_pool_gates_require_a_pool() {
    let env = with_prometheus();
    assert_eq!(
        build_error("prometheus-saturation", json!({}), &env),
        "inference pool name is required for saturation PromQL"
    );
    assert_eq!(
        build_error("prometheus-budget", json!({"pool": ""}), &env),
        "inference pool name is required for prometheus-budget gate"
    );
}

#[test]
fn prometheus_budget_refuses_a_max_concurrency_not_above_zero_and_a_baseline_outside_0_1() {
    let env = with_prometheus();
    let refused = |key: &str, value: serde_json::Value| {
        let mut params = json!({"pool": "p"});
        params[key] = value;
        build_error("prometheus-budget", params, &env)
    };
    for (value, got) in [
        (json!("0"), "0"),
        (json!(-1.5), "-1.5"),
        (json!("NaN"), "NaN"),
    ] {
        let expected = format!("max_concurrency must be positive, got {got}");
        assert_eq!(refused("max_concurrency", value), expected);
    }
    for (value, got) in [
        (json!("1"), "1"),
        (json!("-0.25"), "-0.25"),
        (json!(2e6), "2e+06"),
    ] {
        let expected = format!("baseline must be in [0, 1), got {got}");
        assert_eq!(refused("baseline", value), expected);
    }
}

#[test]
fn a_bad_float_param_is_refused_naming_the_gate_the_param_the_value_and_what_is_accepted() {
    let env = with_prometheus();
    assert_eq!(
        build_error(
            "prometheus-saturation",
            json!({"pool": "p", "threshold": "high"}),
            &env
        ),
        "prometheus-saturation gate: parameter 'threshold' cannot be \"high\": \
         expected a number, or a string holding one (\"high\" is not a number)"
    );
}

#[test]
fn prometheus_query_requires_a_query() {
    assert_eq!(
        build_error("prometheus-query", json!({"query": ""}), &with_prometheus()),
        "prometheus-query gate requires a 'query' parameter with a PromQL expression"
    );
}

#[test]
fn endpoint_scrape_requires_url_and_metric_and_parsable_label_maps() {
    let env = GateEnv::default();
    assert_eq!(
        build_error("endpoint-scrape", json!({"metric": "m"}), &env),
        "endpoint-scrape gate requires a 'url' parameter"
    );
    assert_eq!(
        build_error("endpoint-scrape", json!({"url": "http://x/metrics"}), &env),
        "endpoint-scrape gate requires a 'metric' parameter"
    );
    let base = json!({"url": "http://x/metrics", "metric": "m"});
    for key in ["labels", "pods_labels"] {
        let mut bad = base.clone();
        bad[key] = json!("{not json");
        let error = build_error("endpoint-scrape", bad, &env);
        let prefix = format!(
            "endpoint-scrape gate: parameter '{key}' cannot be \"{{not json\": expected an object"
        );
        assert!(error.starts_with(&prefix), "{error}");
    }
}

#[test]
fn endpoint_scrape_needs_no_prometheus_url() {
    let owner = GateOwner::pool("default");
    let params = params(json!({"url": "http://x/metrics", "metric": "m"}));
    assert!(build("endpoint-scrape", &params, &owner, &GateEnv::default()).is_ok());
}

#[test]
fn an_unparsable_prometheus_url_is_refused_naming_it() {
    let error = build_error(
        "prometheus-query",
        json!({"query": "up"}),
        &env("::", Duration::ZERO),
    );
    assert_eq!(
        error,
        r#"invalid --prometheus-url "::": relative URL without a base"#
    );
}
