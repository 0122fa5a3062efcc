//! The `composite` gate: several gates as one; the budget is the smallest of theirs, and a request passes only if every gate, in order, lets it continue.
//!
//! The chain stops at the first error or verdict other than `Continue`,
//! undoes (last first) only what its own gates reserved, and returns that
//! answer; the caller's earlier reservations are not touched.

use super::contract::{
    DispatchGate, GateConfigError, GateError, GateRequest, GatewayOutcome, Releases, Verdict,
};
use super::nested::{GateBuild, GateConfig};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `gate_type: "composite"`.
#[derive(Debug)]
pub struct CompositeGate {
    gates: Vec<Arc<dyn DispatchGate>>,
}

impl CompositeGate {
    pub fn new(gates: Vec<Arc<dyn DispatchGate>>) -> Self {
        CompositeGate { gates }
    }

    /// Builds each of `gates` (an array of `{gate_type, gate_params}`, or
    /// a string holding one).
    pub fn from_params(build: &GateBuild) -> Result<Self, GateConfigError> {
        let missing =
            "composite gate requires 'gates' parameter with JSON array of gate configurations";
        let configs: Vec<GateConfig> = build.params.required("gates", missing)?;
        let gates = configs.iter().map(|c| build.inner("inner gate", c));
        Ok(CompositeGate::new(gates.collect::<Result<_, _>>()?))
    }
}

#[async_trait::async_trait]
impl DispatchGate for CompositeGate {
    /// The smallest inner budget, 1 with none. As in Go the minimum starts
    /// at 1 and only a smaller value replaces it, so a `NaN` is passed over.
    async fn budget(&self) -> f64 {
        let mut smallest = 1.0;
        for gate in &self.gates {
            let budget = gate.budget().await;
            if budget < smallest {
                smallest = budget;
            }
        }
        smallest
    }

    async fn apply(
        &self,
        request: &mut GateRequest<'_>,
        releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        // The chain's reservations gather in a list of its own and join the
        // caller's only once every gate continued. Undoing them is then
        // running that list, and a chain dropped mid-way (a blocking gate
        // cancelled at the caller's deadline) drops the list, which runs
        // itself: nothing the first gates reserved can leak.
        let mut reserved = Releases::new();
        for gate in &self.gates {
            let answer = gate.apply(request, &mut reserved).await;
            if !matches!(answer, Ok(Verdict::Continue)) {
                reserved.run().await;
                return answer;
            }
        }
        releases.append(reserved);
        Ok(Verdict::Continue)
    }

    fn observe(&self, labels: &BTreeMap<String, String>, outcome: &GatewayOutcome) {
        for gate in &self.gates {
            gate.observe(labels, outcome);
        }
    }

    /// The first wake of any inner gate.
    async fn woken(&self) {
        if self.gates.is_empty() {
            return std::future::pending().await;
        }
        futures::future::select_all(self.gates.iter().map(|gate| gate.woken())).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::scripted::{Envelope, Log, ScriptedGate, build, build_errors, noting};
    use serde_json::json;

    fn chain(gates: &[ScriptedGate]) -> CompositeGate {
        CompositeGate::new(gates.iter().cloned().map(ScriptedGate::shared).collect())
    }

    /// Applies `gate` to a request whose list already holds one release of
    /// the caller's (`release caller`).
    async fn apply_after_the_callers(
        gate: &CompositeGate,
        log: &Log,
    ) -> (Result<Verdict, GateError>, Releases) {
        let mut releases = Releases::new();
        releases.push(noting(log, "release caller".to_owned()));
        let answer = gate
            .apply(&mut Envelope::default().request(), &mut releases)
            .await;
        (answer, releases)
    }

    #[tokio::test]
    async fn the_budget_is_the_smallest_inner_budget_and_one_with_none() {
        let log = Log::default();
        let gates = [0.7, 0.2, f64::NAN, 0.9].map(|b| ScriptedGate::new("g", &log).budget(b));
        assert_eq!(chain(&gates).budget().await, 0.2);
        assert_eq!(chain(&[]).budget().await, 1.0);
        let above_one = [ScriptedGate::new("g", &log).budget(1.5)];
        assert_eq!(chain(&above_one).budget().await, 1.0);
    }

    #[tokio::test]
    async fn every_gate_continuing_continues_and_hands_its_releases_to_the_caller() {
        let log = Log::default();
        let gate = chain(&[
            ScriptedGate::new("a", &log).reserving(),
            ScriptedGate::new("b", &log).reserving(),
        ]);
        let (answer, releases) = apply_after_the_callers(&gate, &log).await;
        assert_eq!(answer.unwrap(), Verdict::Continue);
        assert_eq!(releases.len(), 3);
        releases.run().await;
        assert_eq!(
            log.entries(),
            [
                "apply a",
                "apply b",
                "release b",
                "release a",
                "release caller"
            ]
        );
    }

    #[tokio::test]
    async fn the_first_verdict_other_than_continue_stops_the_chain_and_undoes_only_its_reservations()
     {
        for verdict in [Verdict::Refuse, Verdict::Wait, Verdict::Drop(None)] {
            let log = Log::default();
            let gate = chain(&[
                ScriptedGate::new("a", &log).reserving(),
                ScriptedGate::new("b", &log).reserving(),
                ScriptedGate::new("c", &log).answers(verdict.clone()),
                ScriptedGate::new("d", &log),
            ]);
            let (answer, releases) = apply_after_the_callers(&gate, &log).await;
            assert_eq!(answer.unwrap(), verdict);
            assert_eq!(
                log.entries(),
                ["apply a", "apply b", "apply c", "release b", "release a"]
            );
            assert_eq!(releases.len(), 1, "the caller's own release stays");
        }
    }

    #[tokio::test]
    async fn an_inner_error_stops_the_chain_undoes_its_reservations_and_is_returned_as_is() {
        let log = Log::default();
        let gate = chain(&[
            ScriptedGate::new("a", &log).reserving(),
            ScriptedGate::new("b", &log).fails("boom"),
        ]);
        let (answer, releases) = apply_after_the_callers(&gate, &log).await;
        assert_eq!(answer.unwrap_err().to_string(), "boom");
        assert_eq!(log.entries(), ["apply a", "apply b", "release a"]);
        assert_eq!(releases.len(), 1);
    }

    #[tokio::test]
    async fn the_factory_builds_inner_gates_from_an_array_or_a_json_string() {
        let inner = json!([{"gate_type": "constant"}, {"gate_type": "none"}, {"gate_type": ""}]);
        for gates in [inner.clone(), json!(inner.to_string())] {
            let gate = build("composite", json!({ "gates": gates })).unwrap();
            assert_eq!(gate.budget().await, 1.0);
            let mut releases = Releases::new();
            let answer = gate
                .apply(&mut Envelope::default().request(), &mut releases)
                .await;
            assert_eq!(answer.unwrap(), Verdict::Continue);
        }
    }

    #[test]
    fn its_startup_errors_name_the_gate_the_param_and_what_is_accepted() {
        let missing =
            "composite gate requires 'gates' parameter with JSON array of gate configurations";
        let errors = build_errors(
            "composite",
            [
                json!({}),
                json!({"gates": ""}),
                json!({"gates": "{}"}),
                json!({"gates": {}}),
                json!({"gates": [{"gate_type": "local-max-concurrency"}]}),
            ],
        );
        assert_eq!(
            errors,
            [
                missing,
                missing,
                "composite gate: parameter 'gates' cannot be \"{}\": expected an array of \
                 {\"gate_type\", \"gate_params\"} objects, or a string holding one",
                "composite gate: parameter 'gates' cannot be {}: expected an array of \
                 {\"gate_type\", \"gate_params\"} objects, or a string holding one",
                "composite gate failed to create inner gate \"local-max-concurrency\": \
                 local-max-concurrency limit must be greater than 0, got 0",
            ]
        );
    }
}
