//! The `constant` gate: always fully open (budget 1, every request continues).

use super::contract::DispatchGate;

/// `gate_type: "constant"`; it takes no params.
#[derive(Debug, Default, Clone, Copy)]
pub struct ConstantGate;

#[async_trait::async_trait]
impl DispatchGate for ConstantGate {
    async fn budget(&self) -> f64 {
        1.0
    }
}
