//! What a gate is built with ([`GateBuild`]: its params, owner and env, and the factory for the gates it wraps), the nested `{gate_type, gate_params}` configurations wrapping gates read, and the forwarding of a gate that wraps one inner gate.
//!
//! A nested configuration is given as JSON or as a string holding JSON,
//! and read as Go's encoding/json decodes it into a struct: field names
//! match case-insensitively, unknown keys are ignored, and `null` leaves
//! the zero value.
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
use super::params::{Param, Params, json};
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

/// A gate built, shared; or why it cannot be.
pub type Built = Result<Arc<dyn DispatchGate>, GateConfigError>;

/// One gate being built: its params, its owner and env, and the factory
/// its inner gates are built with.
#[derive(Debug, Clone, Copy)]
pub struct GateBuild<'a> {
    pub params: Params<'a>,
    pub owner: &'a GateOwner,
    pub env: &'a GateEnv,
    pub factory: BuildGate,
}

impl GateBuild<'_> {
    /// Builds the inner gate `config` names, the gate's `what` (`inner
    /// gate`) as its error says it. `""` and `none` build the always-open
    /// gate, as Go does.
    pub fn inner(&self, what: &str, config: &GateConfig) -> Built {
        let GateConfig {
            gate_type,
            gate_params,
        } = config;
        match (self.factory)(gate_type, gate_params, self.owner, self.env) {
            Ok(gate) => Ok(gate.unwrap_or_else(|| Arc::new(ConstantGate))),
            Err(e) => Err(GateConfigError(format!(
                "{} gate failed to create {what} {gate_type:?}: {e}",
                self.params.gate
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

impl Param for GateConfig {
    const ACCEPTS: &'static str =
        "a {\"gate_type\", \"gate_params\"} object, or a string holding one";

    fn read(given: &Value) -> Result<Self, String> {
        decode(&json(given)?)
    }
}

impl Param for Vec<GateConfig> {
    const ACCEPTS: &'static str =
        "an array of {\"gate_type\", \"gate_params\"} objects, or a string holding one";

    /// A string holding `null` is empty.
    fn read(given: &Value) -> Result<Self, String> {
        match json(given)? {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items.iter().map(decode).collect(),
            _ => Err(String::new()),
        }
    }
}

/// One configuration, decoded as Go decodes its struct.
fn decode(json: &Value) -> Result<GateConfig, String> {
    let mut config = GateConfig::default();
    let fields = match json {
        Value::Null => return Ok(config),
        Value::Object(fields) => fields,
        other => return Err(format!("{other} is not an object")),
    };
    for (name, value) in fields {
        if name.eq_ignore_ascii_case("gate_type") {
            match value {
                Value::String(gate_type) => config.gate_type = gate_type.clone(),
                Value::Null => {}
                other => return Err(format!("its gate_type {other} is not a string")),
            }
        } else if name.eq_ignore_ascii_case("gate_params") {
            match value {
                Value::Object(params) => config.gate_params = params.clone(),
                Value::Null => config.gate_params = GateParams::new(),
                other => return Err(format!("its gate_params {other} is not an object")),
            }
        }
    }
    Ok(config)
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
        let inner = inner.map_err(|error| GateError::Source {
            context: W::FAILED.to_owned(),
            source: Box::new(error),
        })?;
        Ok(self.verdict(inner, request))
    }

    fn observe(&self, labels: &BTreeMap<String, String>, outcome: &GatewayOutcome) {
        self.inner().observe(labels, outcome);
    }

    async fn woken(&self) {
        self.inner().woken().await;
    }
}

#[cfg(test)]
#[path = "nested_tests.rs"]
mod tests;
