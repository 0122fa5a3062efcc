//! Driving a gate as the runtime does, for tests of gate types: `gate_params` from a JSON literal, and one request's verdict.

use crate::gate::{DispatchGate, GateError, GateParams, GateRequest, Releases, Verdict};
use std::collections::BTreeMap;

/// `gate_params` from a JSON object literal (anything else is a bug in the
/// test).
pub fn params(value: serde_json::Value) -> GateParams {
    match value {
        serde_json::Value::Object(map) => map,
        other => panic!("gate_params must be an object, got {other}"),
    }
}

/// The verdict for one request with no metadata and no labels; whatever
/// the gate reserved is released before this returns.
pub async fn verdict(gate: &dyn DispatchGate) -> Result<Verdict, GateError> {
    let metadata = BTreeMap::new();
    let mut labels = BTreeMap::new();
    let mut request = GateRequest {
        id: "probe",
        metadata: &metadata,
        labels: &mut labels,
    };
    let mut releases = Releases::new();
    let verdict = gate.apply(&mut request, &mut releases).await;
    releases.run().await;
    verdict
}
