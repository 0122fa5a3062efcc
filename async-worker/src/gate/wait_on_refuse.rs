//! The `wait-on-refuse` gate: one inner gate whose refusals become waits, so a pool worker holds the request in memory instead of requeueing it.

use super::contract::{DispatchGate, GateConfigError, GateRequest, Verdict};
use super::nested::{GateBuild, WrapsOneGate};
use std::sync::Arc;

/// `gate_type: "wait-on-refuse"`.
#[derive(Debug)]
pub struct WaitOnRefuseGate {
    inner: Arc<dyn DispatchGate>,
}

impl WaitOnRefuseGate {
    pub fn new(inner: Arc<dyn DispatchGate>) -> Self {
        WaitOnRefuseGate { inner }
    }

    /// Builds `gate` (one `{gate_type, gate_params}`, or a string holding
    /// one).
    pub fn from_params(build: &GateBuild) -> Result<Self, GateConfigError> {
        let missing =
            "wait-on-refuse gate requires a 'gate' parameter with the inner gate configuration";
        let config = build.params.required("gate", missing)?;
        Ok(WaitOnRefuseGate::new(build.inner("inner gate", &config)?))
    }
}

impl WrapsOneGate for WaitOnRefuseGate {
    const FAILED: &'static str = "inner gate apply failed";

    fn inner(&self) -> &dyn DispatchGate {
        &*self.inner
    }

    fn verdict(&self, inner: Verdict, _request: &GateRequest<'_>) -> Verdict {
        match inner {
            Verdict::Refuse => Verdict::Wait,
            verdict => verdict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::contract::{GateError, Releases};
    use crate::gate::scripted::{Envelope, Log, ScriptedGate, build, build_errors};
    use serde_json::json;

    async fn answer_over(inner: ScriptedGate) -> Result<Verdict, GateError> {
        let gate = WaitOnRefuseGate::new(inner.shared());
        let mut releases = Releases::new();
        gate.apply(&mut Envelope::default().request(), &mut releases)
            .await
    }

    #[tokio::test]
    async fn a_refusal_becomes_a_wait_and_other_verdicts_pass_through() {
        let log = Log::default();
        let cases = [
            (Verdict::Refuse, Verdict::Wait),
            (Verdict::Continue, Verdict::Continue),
            (Verdict::Wait, Verdict::Wait),
            (Verdict::Drop(None), Verdict::Drop(None)),
        ];
        for (inner, outer) in cases {
            let answer = answer_over(ScriptedGate::new("a", &log).answers(inner)).await;
            assert_eq!(answer.unwrap(), outer);
        }
    }

    #[tokio::test]
    async fn the_budget_is_the_inner_budget() {
        let inner = ScriptedGate::new("a", &Log::default()).budget(0.25);
        assert_eq!(WaitOnRefuseGate::new(inner.shared()).budget().await, 0.25);
    }

    #[tokio::test]
    async fn an_inner_error_is_wrapped_keeping_its_source() {
        let error = answer_over(ScriptedGate::new("a", &Log::default()).fails("boom"))
            .await
            .unwrap_err();
        assert_eq!(error.to_string(), "inner gate apply failed: boom");
        let source = std::error::Error::source(&error).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("boom"));
    }

    #[tokio::test]
    async fn the_factory_builds_the_inner_gate_from_an_object_or_a_json_string() {
        let inner = json!({"gate_type": "local-max-concurrency", "gate_params": {"limit": "1"}});
        for gate in [inner.clone(), json!(inner.to_string())] {
            let gate = build("wait-on-refuse", json!({ "gate": gate })).unwrap();
            let (mut first, mut second) = (Releases::new(), Releases::new());
            let mut envelope = Envelope::default();
            let answer = gate.apply(&mut envelope.request(), &mut first).await;
            assert_eq!(answer.unwrap(), Verdict::Continue);
            let answer = gate.apply(&mut envelope.request(), &mut second).await;
            assert_eq!(answer.unwrap(), Verdict::Wait, "full: refused, so wait");
        }
    }

    #[test]
    fn its_startup_errors_name_the_gate_the_param_and_what_is_accepted() {
        let missing =
            "wait-on-refuse gate requires a 'gate' parameter with the inner gate configuration";
        let inner = json!({"gate_type": "local-max-concurrency", "gate_params": {"limit": -1}});
        let errors = build_errors(
            "wait-on-refuse",
            [
                json!({}),
                json!({"gate": ""}),
                json!({"gate": "[]"}),
                json!({"gate": []}),
                json!({ "gate": inner }),
            ],
        );
        assert_eq!(
            errors,
            [
                missing,
                missing,
                "wait-on-refuse gate: parameter 'gate' cannot be \"[]\": expected a \
                 {\"gate_type\", \"gate_params\"} object, or a string holding one \
                 ([] is not an object)",
                "wait-on-refuse gate: parameter 'gate' cannot be []: expected a \
                 {\"gate_type\", \"gate_params\"} object, or a string holding one \
                 ([] is not an object)",
                "wait-on-refuse gate failed to create inner gate \"local-max-concurrency\": \
                 local-max-concurrency limit must be greater than 0, got -1",
            ]
        );
    }
}
