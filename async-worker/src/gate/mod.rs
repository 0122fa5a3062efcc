//! Dispatch gates: the contract every gate type implements ([`contract`]), Go's `gate_params` readers ([`params`]), the gate types, and the factory that builds one from its `gate_type` ([`factory`]).

pub mod constant;
pub mod contract;
pub mod factory;
pub mod params;

pub use contract::{
    DispatchGate, GateConfigError, GateEnv, GateError, GateOwner, GateParams, GateRecord,
    GateRequest, Release, ReleaseFuture, Releases, Verdict, budget_only,
};
