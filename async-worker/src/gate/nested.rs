//! Gate configurations nested in a wrapping gate's params (`composite`'s `gates`, `wait-on-refuse`'s `gate`, `tier-priority-admission`'s `saturation_gate_params`), decoded as Go's encoding/json decodes them, the inner gates built from them, and the forwarding of a gate that wraps one inner gate.
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
//!
//! A gate around one inner gate ([`WrapsOneGate`]: `wait-on-refuse`,
//! `tier-priority-admission`) has the inner gate's budget, observations and
//! wakes; only its verdict is its own.

use super::constant::ConstantGate;
use super::contract::{
    DispatchGate, GateConfigError, GateEnv, GateError, GateOwner, GateParams, GateRequest,
    GatewayOutcome, Releases, Verdict,
};
use super::params::{go_type, json_kind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The factory's `build`, as the wrapping gates receive it.
pub type BuildGate = fn(
    &str,
    &GateParams,
    &GateOwner,
    &GateEnv,
) -> Result<Option<Arc<dyn DispatchGate>>, GateConfigError>;

/// What a wrapping gate builds its inner gates with: the factory, and the
/// outer gate's owner and env.
#[derive(Debug, Clone, Copy)]
pub struct InnerGates<'a> {
    pub build: BuildGate,
    pub owner: &'a GateOwner,
    pub env: &'a GateEnv,
}

impl InnerGates<'_> {
    /// Builds one inner gate; a failure reads `<failure> "<type>": <cause>`.
    /// `""` and `none` build the always-open gate, as Go does.
    pub fn build(
        &self,
        failure: &str,
        config: &GateConfig,
    ) -> Result<Arc<dyn DispatchGate>, GateConfigError> {
        match (self.build)(&config.gate_type, &config.gate_params, self.owner, self.env) {
            Ok(Some(gate)) => Ok(gate),
            Ok(None) => Ok(Arc::new(ConstantGate)),
            Err(e) => Err(GateConfigError(format!(
                "{failure} {:?}: {e}",
                config.gate_type
            ))),
        }
    }
}

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
    /// The gates of a list param, each built by `inner`.
    pub fn gates(
        &self,
        params: &GateParams,
        inner: &InnerGates,
    ) -> Result<Vec<Arc<dyn DispatchGate>>, GateConfigError> {
        let configs = self.configs(params)?;
        let failure = self.failure();
        configs.iter().map(|c| inner.build(&failure, c)).collect()
    }

    /// The gate of a one-gate param, built by `inner`.
    pub fn gate(
        &self,
        params: &GateParams,
        inner: &InnerGates,
    ) -> Result<Arc<dyn DispatchGate>, GateConfigError> {
        inner.build(&self.failure(), &self.config(params)?)
    }

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

    /// The failure an inner gate's build error is wrapped in.
    fn failure(&self) -> String {
        format!("{} gate failed to create inner gate", self.gate)
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

/// An inner gate's apply error, wrapped as `<context>: <error>` with the
/// error kept as the source.
fn wrapped(context: &str, error: GateError) -> GateError {
    GateError::Source {
        context: context.to_owned(),
        source: Box::new(error),
    }
}

/// A gate around one inner gate: the inner gate's budget, observations and
/// wakes are its own, and its verdict is [`WrapsOneGate::verdict`] of the
/// inner gate's (an inner error is wrapped in [`WrapsOneGate::FAILED`]).
pub trait WrapsOneGate: Send + Sync + fmt::Debug + 'static {
    /// The context of a wrapped inner apply error: `<FAILED>: <error>`.
    const FAILED: &'static str;

    /// The gate it wraps.
    fn inner(&self) -> &dyn DispatchGate;

    /// This gate's verdict on `request`, the inner gate having answered
    /// `inner`. An inner `Continue` stays `Continue`: what the inner gate
    /// reserved is handed on, not undone.
    fn verdict(&self, inner: Verdict, request: &GateRequest<'_>) -> Verdict;
}

#[async_trait::async_trait]
impl<W: WrapsOneGate> DispatchGate for W {
    async fn budget(&self) -> f64 {
        self.inner().budget().await
    }

    async fn apply(
        &self,
        request: &mut GateRequest<'_>,
        releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        let inner = self.inner().apply(request, releases).await;
        let inner = inner.map_err(|error| wrapped(W::FAILED, error))?;
        Ok(self.verdict(inner, request))
    }

    fn observe(&self, labels: &BTreeMap<String, String>, outcome: &GatewayOutcome) {
        self.inner().observe(labels, outcome);
    }

    async fn woken(&self) {
        self.inner().woken().await;
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
