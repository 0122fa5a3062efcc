//! The `constant` gate: always fully open (budget 1, every request continues).

use super::contract::{DispatchGate, GateError, GateRequest, Releases, Verdict};

/// `gate_type: "constant"`; it takes no params.
#[derive(Debug, Default, Clone, Copy)]
pub struct ConstantGate;

#[async_trait::async_trait]
impl DispatchGate for ConstantGate {
    async fn budget(&self) -> f64 {
        1.0
    }

    async fn apply(
        &self,
        _request: &mut GateRequest<'_>,
        _releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        Ok(Verdict::Continue)
    }
}
