//! The nested gate-config readers: each accepted shape, refusals naming the value and why, and inner gates built with the outer owner and env.

use super::*;
use crate::gate::scripted::params;
use serde_json::json;
use std::cell::RefCell;

const MISSING: &str = "outer needs gates";

fn configs(value: Value) -> Result<Vec<GateConfig>, String> {
    let given = params(json!({ "gates": value }));
    let read = Params::new("outer", &given).required("gates", MISSING);
    read.map_err(|e| e.0)
}

fn config(value: Value) -> Result<GateConfig, String> {
    let given = params(json!({ "gates": value }));
    let read = Params::new("outer", &given).required("gates", MISSING);
    read.map_err(|e| e.0)
}

fn named(gate_type: &str, gate_params: Value) -> GateConfig {
    GateConfig {
        gate_type: gate_type.to_owned(),
        gate_params: params(gate_params),
    }
}

#[test]
fn a_list_comes_as_an_array_or_a_json_string() {
    let expected = vec![named("constant", json!({})), named("x", json!({"a": "1"}))];
    let array = json!([{"gate_type": "constant"}, {"gate_type": "x", "gate_params": {"a": "1"}}]);
    assert_eq!(configs(array.clone()), Ok(expected.clone()));
    assert_eq!(configs(json!(array.to_string())), Ok(expected));
    assert_eq!(configs(json!("null")), Ok(Vec::new()));
    assert_eq!(configs(json!([])), Ok(Vec::new()));
}

#[test]
fn one_config_comes_as_an_object_or_a_json_string() {
    let expected = named("constant", json!({"k": 1}));
    let object = json!({"gate_type": "constant", "gate_params": {"k": 1}});
    assert_eq!(config(object.clone()), Ok(expected.clone()));
    assert_eq!(config(json!(object.to_string())), Ok(expected));
    assert_eq!(config(json!("null")), Ok(GateConfig::default()));
}

#[test]
fn fields_match_any_case_and_unknown_keys_and_nulls_are_ignored() {
    let decoded = config(json!({"GATE_TYPE": "constant", "Gate_Params": null, "extra": 1}));
    assert_eq!(decoded, Ok(named("constant", json!({}))));
    assert_eq!(
        configs(json!([null, {"gate_type": null}])),
        Ok(vec![GateConfig::default(), GateConfig::default()])
    );
}

#[test]
fn an_absent_null_or_empty_param_is_the_missing_text() {
    for value in [Value::Null, json!("")] {
        assert_eq!(configs(value.clone()), Err(MISSING.to_owned()));
        assert_eq!(config(value), Err(MISSING.to_owned()));
    }
    let read: Result<Vec<GateConfig>, _> =
        Params::new("outer", &GateParams::new()).required("gates", MISSING);
    assert_eq!(read.unwrap_err().0, MISSING);
}

/// What a refusal of `gates` holding `given` starts with: the gate, the
/// parameter, the value and what is accepted.
fn refusal(given: &Value, accepted: &str) -> String {
    format!("outer gate: parameter 'gates' cannot be {given}: expected {accepted}")
}

#[test]
fn a_param_of_the_wrong_kind_is_refused_naming_what_is_accepted() {
    let list = "an array of {\"gate_type\", \"gate_params\"} objects, or a string holding one";
    let one = "a {\"gate_type\", \"gate_params\"} object, or a string holding one";
    for given in [json!({"gate_type": "constant"}), json!(3)] {
        assert_eq!(configs(given.clone()), Err(refusal(&given, list)));
    }
    assert_eq!(
        config(json!([])),
        Err(format!(
            "{} ([] is not an object)",
            refusal(&json!([]), one)
        ))
    );
}

#[test]
fn decoding_failures_name_the_value_and_why() {
    let list = "an array of";
    let one = "a {";
    let cases = [
        (
            configs(json!("[")).map(drop),
            json!("["),
            list,
            "EOF while parsing a list",
        ),
        (configs(json!("{}")).map(drop), json!("{}"), list, ""),
        (
            configs(json!([1])).map(drop),
            json!([1]),
            list,
            "1 is not an object",
        ),
        (
            config(json!("[]")).map(drop),
            json!("[]"),
            one,
            "[] is not an object",
        ),
        (
            config(json!({"gate_type": 1})).map(drop),
            json!({"gate_type": 1}),
            one,
            "its gate_type 1 is not a string",
        ),
        (
            configs(json!([{"gate_params": "x"}])).map(drop),
            json!([{"gate_params": "x"}]),
            list,
            "its gate_params \"x\" is not an object",
        ),
    ];
    for (outcome, given, accepted, why) in cases {
        let error = outcome.unwrap_err();
        assert!(error.starts_with(&refusal(&given, accepted)), "{error}");
        assert!(error.contains(why), "{error}");
    }
    assert!(
        configs(json!("nope"))
            .unwrap_err()
            .contains("at line 1 column")
    );
}

thread_local! {
    /// What the recording factory below was asked to build.
    static BUILT: RefCell<Vec<(String, GateOwner, Option<String>)>> = const { RefCell::new(Vec::new()) };
}

/// A factory that records its calls and fails for `bad`.
fn recording(
    gate_type: &str,
    _params: &GateParams,
    owner: &GateOwner,
    env: &GateEnv,
) -> Result<Option<Arc<dyn DispatchGate>>, GateConfigError> {
    BUILT.with(|built| {
        built.borrow_mut().push((
            gate_type.to_owned(),
            owner.clone(),
            env.prometheus_url.clone(),
        ))
    });
    match gate_type {
        "bad" => Err(GateConfigError("no good".to_owned())),
        "" | "none" => Ok(None),
        _ => Ok(Some(Arc::new(ConstantGate))),
    }
}

#[tokio::test]
async fn inner_gates_get_the_outer_owner_and_env_and_none_is_always_open() {
    let owner = GateOwner::queue("q1", "pending-q1", "pool-a");
    let env = GateEnv {
        prometheus_url: Some("http://prom:9090".to_owned()),
        ..GateEnv::default()
    };
    let given = GateParams::new();
    for gate_type in ["constant", "", "none"] {
        let outer = GateBuild {
            params: Params::new("outer", &given),
            owner: &owner,
            env: &env,
            factory: recording,
        };
        let gate = outer.inner("inner gate", &named(gate_type, json!({})));
        assert_eq!(gate.unwrap().budget().await, 1.0);
    }
    let built = BUILT.with(|built| built.take());
    assert_eq!(built.len(), 3);
    for (_, built_owner, url) in built {
        assert_eq!(built_owner, owner);
        assert_eq!(url.as_deref(), Some("http://prom:9090"));
    }
}

#[test]
fn an_inner_build_failure_names_the_inner_type() {
    let given = GateParams::new();
    let outer = GateBuild {
        params: Params::new("outer", &given),
        owner: &GateOwner::pool("p"),
        env: &GateEnv::default(),
        factory: recording,
    };
    let error = outer
        .inner("inner gate", &named("bad", json!({})))
        .unwrap_err();
    assert_eq!(
        error.0,
        "outer gate failed to create inner gate \"bad\": no good"
    );
}
