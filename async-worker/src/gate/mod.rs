//! Dispatch gates: the contract every gate type implements ([`contract`]), the typed `gate_params` readers ([`params`]), the gate types, each in its own file, and the factory's registry that builds one from its `gate_type` ([`factory`]).

pub mod aimd;
pub mod composite;
pub mod constant;
pub mod contract;
pub mod factory;
pub mod local_max_concurrency;
#[cfg(feature = "metric-gates")]
pub mod metric;
pub mod nested;
pub mod outcome;
pub mod params;
#[cfg(feature = "redis")]
pub mod redis_budget;
#[cfg(feature = "redis")]
pub mod redis_clients;
#[cfg(feature = "redis")]
pub mod redis_quota;
pub mod tier_priority_admission;
pub mod wait_on_refuse;

pub use contract::{
    DispatchGate, GateConfigError, GateEnv, GateError, GateOwner, GateParams, GateRecord,
    GateRequest, GatewayAnswer, GatewayOutcome, OutcomeKind, Release, ReleaseFuture, Releases,
    Verdict, budget_only,
};
#[cfg(feature = "redis")]
pub use redis_clients::RedisClients;

#[cfg(test)]
#[path = "testing/scripted.rs"]
mod scripted;
