//! What an application needs, in one import: `use async_worker::prelude::*;`.
//!
//! The runtime and its builder, the handler vocabulary (raw and typed), the
//! store traits (the worker's, the producer's with `push`, the read-only
//! views and whole-list reads) and the types their calls name, and, behind the `memory`
//! and `redis` features, the stores themselves.

pub use crate::config::{BuildError, PoolSpec, QueueSpec, RuntimeConfig};
pub use crate::gate::{DispatchGate, GateRequest, Releases, Verdict};
pub use crate::handler::{Handler, HandlerOutcome, Request};
pub use crate::runtime::{IntoStore, RunReport, Runtime, RuntimeBuilder};
pub use crate::typed::{HandlerFn, JobContext, handler_fn};
pub use claim_core::store::{StoreConfig, Submission};
pub use claim_core::wire::{Envelope, ErrorCode};
pub use claim_core::{
    ClaimInspect, ClaimProducer, ClaimStore, Clock, Generation, ListReads, Member, Millis,
    StoreError, SystemClock, unix_now,
};
pub use tokio_util::sync::CancellationToken;

#[cfg(feature = "memory")]
pub use claim_memory::MemoryStore;
#[cfg(feature = "redis")]
pub use claim_redis::{ConnectError, RedisStore, RedisStoreOptions, Topology};
