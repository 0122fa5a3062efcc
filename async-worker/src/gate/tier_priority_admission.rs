//! The `tier-priority-admission` gate: while an inner saturation gate refuses (or says wait), reserved requests wait, interactive overflow is answered 429 at once, and the rest are refused.
//!
//! Not saturated, every request continues. Saturated (the inner gate
//! refused or said wait), a request labelled `classification=reserved` waits; one
//! labelled `interactive` (under `tier_label`) and `overflow` is dropped
//! with the 429 record; any other (async or batch tiers, unclassified
//! requests) is refused.

use super::contract::{
    DispatchGate, GateConfigError, GateParams, GateRecord, GateRequest, Verdict,
};
use super::nested::{GateBuild, GateConfig, WrapsOneGate};
use std::sync::Arc;

/// The payload of the record a dropped interactive overflow request gets,
/// byte for byte as Go writes it (spaces included).
pub const TOO_MANY_REQUESTS: &str = r#"{"error": "Too Many Requests", "code": 429}"#;

/// `gate_type: "tier-priority-admission"`.
#[derive(Debug)]
pub struct TierPriorityAdmissionGate {
    saturation: Arc<dyn DispatchGate>,
    tier_label: String,
}

impl TierPriorityAdmissionGate {
    pub fn new(saturation: Arc<dyn DispatchGate>, tier_label: &str) -> Self {
        TierPriorityAdmissionGate {
            saturation,
            tier_label: tier_label.to_owned(),
        }
    }

    /// Builds `saturation_gate` (a type name) with `saturation_gate_params`
    /// (an object, or a string holding one); the tier is read under
    /// `tier_label` (`tier`).
    pub fn from_params(build: &GateBuild) -> Result<Self, GateConfigError> {
        let gate_type = build.params.text("saturation_gate", "");
        if gate_type.is_empty() {
            return Err(GateConfigError(
                "tier-priority-admission gate requires a 'saturation_gate' parameter".to_owned(),
            ));
        }
        let gate_params = build
            .params
            .get("saturation_gate_params", GateParams::new())?;
        let saturation = build.inner(
            "saturation gate",
            &GateConfig {
                gate_type,
                gate_params,
            },
        )?;
        let tier_label = build.params.text("tier_label", "tier");
        Ok(TierPriorityAdmissionGate::new(saturation, &tier_label))
    }
}

impl WrapsOneGate for TierPriorityAdmissionGate {
    const FAILED: &'static str = "saturation gate failed";

    fn inner(&self) -> &dyn DispatchGate {
        &*self.saturation
    }

    fn verdict(&self, inner: Verdict, request: &GateRequest<'_>) -> Verdict {
        // A refusal means saturated, as at Go's HEAD, and so does a Wait, as
        // in PR #382: a gate that signals fullness with Wait (`aimd` for a
        // reserved request) reserved nothing, so letting the request
        // continue would admit it unbounded. An inner Drop continues (HEAD).
        if !matches!(inner, Verdict::Refuse | Verdict::Wait) {
            return Verdict::Continue;
        }
        let label = |key: &str| request.labels.get(key).map(String::as_str);
        let classification = label("classification");
        if classification == Some("reserved") {
            return Verdict::Wait;
        }
        if label(&self.tier_label) == Some("interactive") && classification == Some("overflow") {
            tracing::debug!(
                request = request.id,
                "saturated: interactive overflow answered 429"
            );
            return Verdict::Drop(Some(GateRecord {
                payload: TOO_MANY_REQUESTS.to_owned(),
            }));
        }
        Verdict::Refuse
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::contract::Releases;
    use crate::gate::scripted::{Envelope, Log, ScriptedGate, build, build_error};
    use serde_json::json;

    fn too_many_requests() -> Verdict {
        Verdict::Drop(Some(GateRecord {
            payload: TOO_MANY_REQUESTS.to_owned(),
        }))
    }

    /// The verdict for a request with `labels` behind an inner gate that
    /// answers `inner`, the tier read from `tier_label`.
    async fn verdict(inner: Verdict, tier_label: &str, labels: &[(&str, &str)]) -> Verdict {
        let saturation = ScriptedGate::new("saturation", &Log::default()).answers(inner);
        let gate = TierPriorityAdmissionGate::new(saturation.shared(), tier_label);
        let mut releases = Releases::new();
        gate.apply(&mut Envelope::labelled(labels).request(), &mut releases)
            .await
            .unwrap()
    }

    /// `gate`'s verdict on an interactive overflow request, its tier under
    /// `tier_label`, the request's reservations kept in `held`.
    async fn overflow_verdict(
        gate: &dyn DispatchGate,
        tier_label: &str,
        held: &mut Releases,
    ) -> Verdict {
        let labels = [(tier_label, "interactive"), ("classification", "overflow")];
        let mut envelope = Envelope::labelled(&labels);
        gate.apply(&mut envelope.request(), held).await.unwrap()
    }

    #[tokio::test]
    async fn not_saturated_every_request_continues() {
        let overflow = [("tier", "interactive"), ("classification", "overflow")];
        for inner in [Verdict::Continue, Verdict::Drop(None)] {
            assert_eq!(verdict(inner, "tier", &overflow).await, Verdict::Continue);
        }
    }

    #[tokio::test]
    async fn an_inner_wait_is_saturation_as_an_inner_refusal_is() {
        let reserved = [("tier", "interactive"), ("classification", "reserved")];
        assert_eq!(
            verdict(Verdict::Wait, "tier", &reserved).await,
            Verdict::Wait
        );
        let overflow = [("tier", "interactive"), ("classification", "overflow")];
        assert_eq!(
            verdict(Verdict::Wait, "tier", &overflow).await,
            too_many_requests()
        );
    }

    #[tokio::test]
    async fn saturated_reserved_waits_interactive_overflow_is_429_and_the_rest_are_refused() {
        let cases: [(&[(&str, &str)], Verdict); 6] = [
            (&[("classification", "reserved")], Verdict::Wait),
            (
                &[("tier", "batch"), ("classification", "reserved")],
                Verdict::Wait,
            ),
            (
                &[("tier", "interactive"), ("classification", "overflow")],
                too_many_requests(),
            ),
            (
                &[("tier", "async"), ("classification", "overflow")],
                Verdict::Refuse,
            ),
            (&[("tier", "interactive")], Verdict::Refuse),
            (&[], Verdict::Refuse),
        ];
        for (labels, expected) in cases {
            assert_eq!(
                verdict(Verdict::Refuse, "tier", labels).await,
                expected,
                "{labels:?}"
            );
        }
    }

    #[tokio::test]
    async fn the_tier_is_read_from_the_configured_label() {
        let labels = [("lane", "interactive"), ("classification", "overflow")];
        assert_eq!(
            verdict(Verdict::Refuse, "lane", &labels).await,
            too_many_requests()
        );
        assert_eq!(
            verdict(Verdict::Refuse, "tier", &labels).await,
            Verdict::Refuse
        );
    }

    #[tokio::test]
    async fn the_budget_is_the_inner_one_and_an_inner_error_is_wrapped() {
        let saturation = ScriptedGate::new("s", &Log::default())
            .budget(0.4)
            .fails("down");
        let gate = TierPriorityAdmissionGate::new(saturation.shared(), "tier");
        assert_eq!(gate.budget().await, 0.4);
        let mut releases = Releases::new();
        let error = gate
            .apply(&mut Envelope::default().request(), &mut releases)
            .await
            .unwrap_err();
        assert_eq!(error.to_string(), "saturation gate failed: down");
    }

    #[tokio::test]
    async fn the_factory_builds_the_saturation_gate_from_an_object_or_a_json_string() {
        let inner = json!({"limit": 1});
        for inner_params in [inner.clone(), json!(inner.to_string())] {
            let gate = build(
                "tier-priority-admission",
                json!({"saturation_gate": "local-max-concurrency", "saturation_gate_params": inner_params, "tier_label": "lane"}),
            )
            .unwrap();
            let mut held = Releases::new();
            let first = overflow_verdict(&*gate, "lane", &mut held).await;
            assert_eq!(first, Verdict::Continue);
            let second = overflow_verdict(&*gate, "lane", &mut Releases::new()).await;
            assert_eq!(second, too_many_requests());
        }
    }

    #[test]
    fn its_startup_errors_name_the_gate_the_param_and_what_is_accepted() {
        let gate = "tier-priority-admission";
        assert_eq!(
            build_error(gate, json!({})),
            "tier-priority-admission gate requires a 'saturation_gate' parameter"
        );
        assert_eq!(
            build_error(
                gate,
                json!({"saturation_gate": "constant", "saturation_gate_params": "{"})
            ),
            "tier-priority-admission gate: parameter 'saturation_gate_params' cannot be \"{\": \
             expected an object, or a string holding one \
             (EOF while parsing an object at line 1 column 1)"
        );
        assert_eq!(
            build_error(
                gate,
                json!({"saturation_gate": "constant", "saturation_gate_params": 5})
            ),
            "tier-priority-admission gate: parameter 'saturation_gate_params' cannot be 5: \
             expected an object, or a string holding one"
        );
        assert_eq!(
            build_error(
                gate,
                json!({"saturation_gate": "local-max-concurrency", "saturation_gate_params": {"limit": "x"}})
            ),
            "tier-priority-admission gate failed to create saturation gate \"local-max-concurrency\": \
             local-max-concurrency gate: parameter 'limit' cannot be \"x\": \
             expected a whole number, or a string holding one"
        );
    }

    #[tokio::test]
    async fn a_none_saturation_gate_is_never_saturated() {
        let gate = build(
            "tier-priority-admission",
            json!({"saturation_gate": "none"}),
        )
        .unwrap();
        let answer = overflow_verdict(&*gate, "tier", &mut Releases::new()).await;
        assert_eq!(answer, Verdict::Continue);
    }
}
