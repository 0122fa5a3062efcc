//! Gate configurations nested in a wrapping gate's params (`composite`'s `gates`, `wait-on-refuse`'s `gate`, `tier-priority-admission`'s `saturation_gate_params`), decoded as Go's encoding/json decodes them, and the inner gates built from them.
//!
//! A nested configuration is `{gate_type, gate_params}`, given as JSON
//! itself or as a string holding JSON. Go decodes it into a struct: field
//! names match case-insensitively, unknown keys are ignored, `null` is the
//! zero value, and a value of the wrong JSON kind is refused with Go's
//! `json: cannot unmarshal …` text, which these readers reproduce.
//!
//! Inner gates are built by the same factory as the outer one, with the
//! outer gate's owner and env (an owner never comes from configuration).
//! The factory is passed in as a function so this module does not import
//! the factory that imports it.

use super::constant::ConstantGate;
use super::contract::{DispatchGate, GateConfigError, GateEnv, GateError, GateOwner, GateParams};
use super::params::{go_type, json_kind};
use serde_json::Value;
use std::sync::Arc;

/// The factory's `build`, as the wrapping gates receive it.
pub type BuildGate = fn(
    &str,
    &GateParams,
    &GateOwner,
    &GateEnv,
) -> Result<Option<Arc<dyn DispatchGate>>, GateConfigError>;

/// One nested `{gate_type, gate_params}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateConfig {
    pub gate_type: String,
    pub gate_params: GateParams,
}

/// A param holding nested gate configuration, and the texts its gate
/// refuses it with.
#[derive(Debug, Clone, Copy)]
pub struct NestedParam {
    /// The outer gate's type (`composite`).
    pub gate: &'static str,
    /// The param's key (`gates`).
    pub key: &'static str,
    /// The error when the param is absent, `null` or `""`.
    pub missing: &'static str,
}

impl NestedParam {
    /// A list of configurations: an array, or a string holding one.
    pub fn configs(&self, params: &GateParams) -> Result<Vec<GateConfig>, GateConfigError> {
        let json = self.json(params, Value::is_array)?;
        match &json {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items
                .iter()
                .map(decode_config)
                .collect::<Result<_, _>>()
                .map_err(|e| self.unparsable(e)),
            other => Err(self.unparsable(mismatch(other, "[]pipeline.GateConfig"))),
        }
    }

    /// One configuration: an object, or a string holding one.
    pub fn config(&self, params: &GateParams) -> Result<GateConfig, GateConfigError> {
        let json = self.json(params, Value::is_object)?;
        decode_config(&json).map_err(|e| self.unparsable(e))
    }

    /// The param's JSON: the value itself when its kind is accepted, or
    /// what its string holds.
    fn json(
        &self,
        params: &GateParams,
        accepts: fn(&Value) -> bool,
    ) -> Result<Value, GateConfigError> {
        match params.get(self.key) {
            None | Some(Value::Null) => Err(GateConfigError(self.missing.to_owned())),
            Some(Value::String(text)) if text.is_empty() => {
                Err(GateConfigError(self.missing.to_owned()))
            }
            Some(Value::String(text)) => parse_json(text).map_err(|e| self.unparsable(e)),
            Some(value) if accepts(value) => Ok(value.clone()),
            Some(value) => Err(GateConfigError(format!(
                "{} gate: unsupported type {} for '{}' parameter",
                self.gate,
                go_type(value),
                self.key
            ))),
        }
    }

    fn unparsable(&self, error: String) -> GateConfigError {
        GateConfigError(format!(
            "{} gate failed to parse '{}' parameter: {error}",
            self.gate, self.key
        ))
    }
}

/// An object param (Go's `map[string]any` reader): an object, or a string
/// holding one; absent, `null`, `""` or `"null"` is empty. The error is for
/// the gate to wrap.
pub fn object(params: &GateParams, key: &str) -> Result<GateParams, String> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(GateParams::new()),
        Some(Value::String(text)) if text.is_empty() => Ok(GateParams::new()),
        Some(Value::String(text)) => match parse_json(text) {
            Ok(Value::Null) => Ok(GateParams::new()),
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(mismatch(&other, "map[string]interface {}")),
            Err(e) => Err(e),
        }
        .map_err(|e| format!("failed to parse {key}: {e}")),
        Some(Value::Object(map)) => Ok(map.clone()),
        Some(other) => Err(format!(
            "unsupported type {} for key {key:?}",
            go_type(other)
        )),
    }
}

/// Builds one inner gate; a failure reads `<failure> "<type>": <cause>`.
/// `""` and `none` build the always-open gate, as Go does.
pub fn build_inner(
    build: BuildGate,
    failure: &str,
    config: &GateConfig,
    owner: &GateOwner,
    env: &GateEnv,
) -> Result<Arc<dyn DispatchGate>, GateConfigError> {
    match build(&config.gate_type, &config.gate_params, owner, env) {
        Ok(Some(gate)) => Ok(gate),
        Ok(None) => Ok(Arc::new(ConstantGate)),
        Err(e) => Err(GateConfigError(format!(
            "{failure} {:?}: {e}",
            config.gate_type
        ))),
    }
}

/// An inner gate's apply error, wrapped as `<context>: <error>` with the
/// error kept as the source.
pub fn wrapped(context: &str, error: GateError) -> GateError {
    GateError::Source {
        context: context.to_owned(),
        source: Box::new(error),
    }
}

/// JSON text; a truncated document reads as Go's does (other syntax errors
/// keep serde's wording, which Go's differs from).
fn parse_json(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| {
        if e.is_eof() {
            "unexpected end of JSON input".to_owned()
        } else {
            e.to_string()
        }
    })
}

/// Go's struct decoding of one configuration.
fn decode_config(json: &Value) -> Result<GateConfig, String> {
    let fields = match json {
        Value::Null => return Ok(GateConfig::default()),
        Value::Object(fields) => fields,
        other => return Err(mismatch(other, "pipeline.GateConfig")),
    };
    let mut config = GateConfig::default();
    for (name, value) in fields {
        if name.eq_ignore_ascii_case("gate_type") {
            match value {
                Value::String(gate_type) => config.gate_type = gate_type.clone(),
                // Go leaves a string untouched by `null`.
                Value::Null => {}
                other => return Err(field_mismatch(other, "gate_type", "string")),
            }
        } else if name.eq_ignore_ascii_case("gate_params") {
            match value {
                Value::Object(params) => config.gate_params = params.clone(),
                Value::Null => config.gate_params = GateParams::new(),
                other => {
                    return Err(field_mismatch(
                        other,
                        "gate_params",
                        "map[string]interface {}",
                    ));
                }
            }
        }
    }
    Ok(config)
}

fn mismatch(value: &Value, go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go value of type {go_type}",
        json_kind(value)
    )
}

fn field_mismatch(value: &Value, field: &str, go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go struct field GateConfig.{field} of type {go_type}",
        json_kind(value)
    )
}

#[cfg(test)]
mod tests {
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
        let array =
            json!([{"gate_type": "constant"}, {"gate_type": "x", "gate_params": {"a": "1"}}]);
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
            let gate = build_inner(
                recording,
                "outer",
                &named(gate_type, json!({})),
                &owner,
                &env,
            );
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
        let error = build_inner(
            recording,
            "outer gate failed to create inner gate",
            &named("bad", json!({})),
            &GateOwner::pool("p"),
            &GateEnv::default(),
        )
        .unwrap_err();
        assert_eq!(
            error.0,
            "outer gate failed to create inner gate \"bad\": no good"
        );
    }
}
