//! `ClaimStore` over Redis: Lua scripts, the key layout, a connection pool; wire-compatible with the Go processor.
//!
//! Build a store with [`RedisStore::connect`]. Every claim mutation runs as
//! one Lua script per batch (see `lua/`, each file opens with its KEYS,
//! ARGV, return value and correctness argument), so one round trip serves
//! many requests. Keys come from [`keys`]; with an empty prefix they are
//! exactly the Go producer's and consumer's. Time is the server's `TIME`
//! unless an explicit clock is injected ([`TimeSource`]).

mod codec;
mod conn;
mod connect;
mod durability;
pub mod keys;
mod ops;
mod options;
mod replicas;
mod scripts;
pub mod slots;
mod state;
mod store;
mod tls;

#[cfg(feature = "test-support")]
pub mod testing;

pub use conn::CALL_SPAN_TARGET;
pub use durability::DurabilityReport;
pub use keys::KeyLayout;
pub use options::{ConnectError, RedisStoreOptions, TimeSource, TlsOptions, Topology, redact};
pub use replicas::ReplicaAckStats;
pub use state::RedisStore;
