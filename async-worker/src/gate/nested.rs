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
#[path = "nested_tests.rs"]
mod tests;
