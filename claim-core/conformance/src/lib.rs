//! The conformance suite every `ClaimStore` must pass: plain generic async checks, each file listing its own, and a runner that makes each a trial.
//!
//! Each check (in [`checks`]: claims, leases, acks, poison, returns,
//! answered, reclaims, payloads, hostile, routing, admin) takes a
//! [`StoreFactory`], builds fresh stores on a manual clock (explicit time,
//! no sleeps) and asserts one behaviour the worker relies on: every row of
//! the outcome table and every guarantee of the design brief. A failed
//! assertion panics, as in any test.
//!
//! A backend runs them from one `harness = false` test target whose `main`
//! is one call of [`run`], which makes every check a trial, in four passes:
//!
//! - `plain::<file>::<check>`: on a fresh store from the factory;
//! - `through_faults::<file>::<check>`: on [`unreliable::UnreliableStore`]
//!   behind [`retrying::Retrying`], once per seed ([`faults`]);
//! - `server_time::<file>::<check>` (when asked): the checks that neither
//!   move the clock nor assert an exact instant, on stores that read the
//!   server's own clock, with fixtures starting at that clock's time;
//! - `admin::<file>::<check>`: the operator's operations (`ClaimAdmin`),
//!   once each on a fresh store;
//!
//! and, when asked, the two [`model_based`] tests (random workloads against
//! the claim-core model, with and without faults) as `model_based::` trials.
//! `cargo test -p <backend> --test conformance -- --list` lists every trial
//! and a name filter runs the matching ones. Adding a check is writing it
//! and naming it once in its file's `checks()`.

pub mod checks;
mod factory;
pub mod faults;
pub mod model_based;
mod runner;

pub use checks::support::fixture;
pub use checks::{Check, Needs};
pub use factory::{CheckedStore, Started, StoreFactory, T0};
pub use faults::{retrying, unreliable};
pub use runner::{MakeFactory, ModelBased, Options, ServerTime, all_admin_checks, all_checks, run};
