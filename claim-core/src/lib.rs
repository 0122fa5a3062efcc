//! Pure core of the durable claim/lease/ack protocol: no I/O, no clock, no runtime.
//!
//! Every time-dependent transition takes `now` explicitly. The [`model::Model`]
//! is the specification every store is checked against; [`store::ClaimStore`]
//! is the trait the worker runtime programs against.

pub mod admin;
pub mod clock;
pub mod config;
pub mod error;
pub mod keys;
pub mod layer;
pub mod lease;
pub mod marker;
pub mod model;
pub mod op;
pub mod outcome;
pub mod routing;
pub mod store;
pub mod types;
pub mod wire;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use admin::{ClaimAdmin, Redrive};
pub use clock::{Clock, ManualClock, SystemClock, unix_now, unix_now_ms};
pub use error::StoreError;
pub use op::Op;
pub use store::{ClaimInspect, ClaimStore};
pub use types::*;
