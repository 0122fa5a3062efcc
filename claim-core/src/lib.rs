//! Pure core of the durable claim/lease/ack protocol: no I/O, no clock, no runtime.
//!
//! Every time-dependent transition takes `now` explicitly. The [`model::Model`]
//! is the specification every store is checked against. A store's traits
//! follow who calls it: [`ClaimStore`] (the worker runtime's hot path, with
//! the reads of [`ClaimInspect`]), [`ClaimProducer`] (submit, enqueue,
//! cancel, push) and [`ClaimAdmin`] (the operator); [`Store`] is all of them.

pub mod admin;
pub mod clock;
pub mod config;
pub mod error;
pub mod keys;
pub mod layer;
pub mod lease;
pub mod lists;
pub mod marker;
pub mod model;
pub mod op;
pub mod outcome;
pub mod producer;
pub mod roles;
pub mod routing;
pub mod store;
pub mod stored;
pub mod types;
pub mod wire;

pub use admin::{ClaimAdmin, Redrive, RetryNow};
pub use clock::{Clock, ManualClock, SystemClock, unix_now, unix_now_ms};
pub use error::{Result, StoreError};
pub use lists::ListReads;
pub use op::Op;
pub use producer::ClaimProducer;
pub use roles::Store;
pub use store::{ClaimInspect, ClaimStore};
pub use stored::{Member, Payload, Record};
pub use types::*;
