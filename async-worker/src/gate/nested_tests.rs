//! The nested gate-config readers: each accepted shape, Go's decoding errors, and inner gates built with the outer owner and env.

use super::*;
use crate::gate::scripted::params;
use serde_json::json;
use std::cell::RefCell;

const GATES: NestedParam = NestedParam {
    gate: "outer",
    key: "gates",
    missing: "outer needs gates",
};

fn configs(value: Value) -> Result<Vec<GateConfig>, String> {
    GATES
        .configs(&params(json!({ "gates": value })))
        .map_err(|e| e.0)
}

fn config(value: Value) -> Result<GateConfig, String> {
    GATES
        .config(&params(json!({ "gates": value })))
        .map_err(|e| e.0)
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
        assert_eq!(configs(value.clone()), Err("outer needs gates".to_owned()));
        assert_eq!(config(value), Err("outer needs gates".to_owned()));
    }
    assert_eq!(
        GATES.configs(&GateParams::new()).unwrap_err().0,
        "outer needs gates"
    );
}

#[test]
fn a_param_of_the_wrong_kind_is_an_unsupported_type() {
    assert_eq!(
        configs(json!({"gate_type": "constant"})).unwrap_err(),
        "outer gate: unsupported type map[string]interface {} for 'gates' parameter"
    );
    assert_eq!(
        config(json!([])).unwrap_err(),
        "outer gate: unsupported type []interface {} for 'gates' parameter"
    );
    assert_eq!(
        configs(json!(3)).unwrap_err(),
        "outer gate: unsupported type float64 for 'gates' parameter"
    );
}

#[test]
fn decoding_failures_read_as_go_json_errors() {
    let parse = "outer gate failed to parse 'gates' parameter: ";
    let cases = [
        (
            configs(json!("[")).map(drop),
            "unexpected end of JSON input",
        ),
        (
            configs(json!("{}")).map(drop),
            "json: cannot unmarshal object into Go value of type []pipeline.GateConfig",
        ),
        (
            configs(json!([1])).map(drop),
            "json: cannot unmarshal number into Go value of type pipeline.GateConfig",
        ),
        (
            config(json!("[]")).map(drop),
            "json: cannot unmarshal array into Go value of type pipeline.GateConfig",
        ),
        (
            config(json!({"gate_type": 1})).map(drop),
            "json: cannot unmarshal number into Go struct field GateConfig.gate_type of type string",
        ),
        (
            configs(json!([{"gate_params": "x"}])).map(drop),
            "json: cannot unmarshal string into Go struct field GateConfig.gate_params of type map[string]interface {}",
        ),
    ];
    for (outcome, cause) in cases {
        assert_eq!(outcome, Err(format!("{parse}{cause}")));
    }
    assert!(configs(json!("nope")).unwrap_err().starts_with(parse));
}

#[test]
fn an_object_param_comes_as_an_object_or_a_json_string() {
    let read = |value: Value| object(&params(json!({ "p": value })), "p");
    assert_eq!(read(json!({"a": 1})), Ok(params(json!({"a": 1}))));
    assert_eq!(read(json!(r#"{"a":1}"#)), Ok(params(json!({"a": 1}))));
    for empty in [Value::Null, json!(""), json!("null")] {
        assert_eq!(read(empty), Ok(GateParams::new()));
    }
    assert_eq!(
        read(json!("[1]")),
        Err(
            "failed to parse p: json: cannot unmarshal array into Go value of type map[string]interface {}"
                .to_owned()
        )
    );
    assert_eq!(
        read(json!("{")),
        Err("failed to parse p: unexpected end of JSON input".to_owned())
    );
    assert_eq!(
        read(json!(true)),
        Err("unsupported type bool for key \"p\"".to_owned())
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
    for gate_type in ["constant", "", "none"] {
        let inner = InnerGates {
            build: recording,
            owner: &owner,
            env: &env,
        };
        let gate = inner.build("outer", &named(gate_type, json!({})));
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
    let inner = InnerGates {
        build: recording,
        owner: &GateOwner::pool("p"),
        env: &GateEnv::default(),
    };
    let error = inner
        .build(
            "outer gate failed to create inner gate",
            &named("bad", json!({})),
        )
        .unwrap_err();
    assert_eq!(
        error.0,
        "outer gate failed to create inner gate \"bad\": no good"
    );
}
