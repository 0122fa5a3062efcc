//! Building a runtime: the store, its queues, handler, gate and clock, checked once, with routing taken from the store's config.
//!
//! Routing has one source, the store's [`StoreConfig`]: the store writes
//! some records itself (`DELIVERY_LIMIT`) and routes them by its config, so
//! the runtime must route its own by the same values. The builder fills a
//! queue spec's `result_queue_name` and `result_ttl_seconds` from the
//! store's config and refuses a spec that names different ones.

use super::Runtime;
use super::pools::{GateSet, Pools};
use crate::config::PoolSpec;
use crate::config::{BuildError, QueueSpec, RuntimeConfig};
use crate::gate::DispatchGate;
use crate::handler::Handler;
use claim_core::store::StoreConfig;
use claim_core::{ClaimStore, Clock, OwnerToken, SystemClock};
use std::sync::Arc;
use std::time::Duration;

/// What [`Runtime::builder`] takes as its store: a shared `Arc<dyn
/// ClaimStore>`, an `Arc` of a concrete store, or (with the `memory` and
/// `redis` features) a store by value.
pub trait IntoStore {
    fn into_store(self) -> Arc<dyn ClaimStore>;
}

impl IntoStore for Arc<dyn ClaimStore> {
    fn into_store(self) -> Arc<dyn ClaimStore> {
        self
    }
}

impl<S: ClaimStore + 'static> IntoStore for Arc<S> {
    fn into_store(self) -> Arc<dyn ClaimStore> {
        self
    }
}

#[cfg(feature = "memory")]
impl IntoStore for claim_memory::MemoryStore {
    fn into_store(self) -> Arc<dyn ClaimStore> {
        Arc::new(self)
    }
}

#[cfg(feature = "redis")]
impl IntoStore for claim_redis::RedisStore {
    fn into_store(self) -> Arc<dyn ClaimStore> {
        Arc::new(self)
    }
}

/// Writes a builder method per [`RuntimeConfig`] knob, setting the field of its name.
macro_rules! config_setters {
    ($($(#[$doc:meta])* $knob:ident: $ty:ty;)*) => {
        $(
            $(#[$doc])*
            pub fn $knob(mut self, $knob: $ty) -> Self {
                self.config.$knob = $knob;
                self
            }
        )*
    };
}

/// A runtime under construction; [`RuntimeBuilder::build`] checks it.
///
/// Defaults: [`RuntimeConfig::default`]'s knobs, the open gate, the system
/// clock. The queues are the ones given with [`RuntimeBuilder::queue`]
/// (or in a whole [`RuntimeConfig`]); a handler is required.
#[must_use = "a builder does nothing until .build()"]
pub struct RuntimeBuilder {
    store: Arc<dyn ClaimStore>,
    config: RuntimeConfig,
    handler: Option<Arc<dyn Handler>>,
    gates: GateSet,
    clock: Arc<dyn Clock>,
    pod: Option<String>,
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("config", &self.config)
            .field("handler", &self.handler.is_some())
            .finish()
    }
}

impl RuntimeBuilder {
    pub(super) fn new(store: Arc<dyn ClaimStore>) -> Self {
        RuntimeBuilder {
            store,
            config: RuntimeConfig {
                queues: Vec::new(),
                ..RuntimeConfig::default()
            },
            handler: None,
            gates: GateSet::default(),
            clock: Arc::new(SystemClock),
            pod: None,
        }
    }

    /// Names the pod (host) this runtime runs in, in its owner token
    /// ([`claim_core::OwnerToken::for_pod`]: `<pod>/<32 hex digits>`), so
    /// the status page and `admin claims` can say which pod holds a claim.
    pub fn pod(mut self, name: &str) -> Self {
        self.pod = Some(name.to_owned());
        self
    }

    /// Drains this queue too (a name, or a [`QueueSpec`]).
    pub fn queue(mut self, spec: impl Into<QueueSpec>) -> Self {
        self.config.queues.push(spec.into());
        self
    }

    /// Every setting at once, queues included (replacing those given so far).
    pub fn config(mut self, config: RuntimeConfig) -> Self {
        self.config = config;
        self
    }

    /// The application's handler: a [`Handler`], an `Arc` of one, or a
    /// typed handler ([`crate::handler_fn`]).
    pub fn handler(mut self, handler: impl Handler) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// A queue gate for every queue without one of its own (default: none,
    /// every member is claimed). It runs before any claim: see
    /// [`DispatchGate`] for what each verdict does.
    pub fn gate(mut self, gate: impl DispatchGate) -> Self {
        self.gates.every_queue = Some(Arc::new(gate));
        self
    }

    /// The queue gate of the queue with id `queue_id` (Go: the queue's
    /// `gate_type`/`gate_params`, built with [`crate::gate::factory::build`]).
    pub fn queue_gate(mut self, queue_id: impl Into<String>, gate: Arc<dyn DispatchGate>) -> Self {
        self.gates.queues.insert(queue_id.into(), gate);
        self
    }

    /// A worker pool (Go: a `--pool-config-file` entry). With none, every
    /// queue runs in `default` with [`RuntimeBuilder::concurrency`] workers.
    pub fn pool(mut self, pool: PoolSpec) -> Self {
        self.config.pools.push(pool);
        self
    }

    /// The pool gate of pool `name`: it runs in the pool's workers after
    /// the claim, before the handler.
    pub fn pool_gate(mut self, name: impl Into<String>, gate: Arc<dyn DispatchGate>) -> Self {
        self.gates.pools.insert(name.into(), gate);
        self
    }

    /// Orders claiming inside each pool by each queue's `tier_label` label
    /// (Go's `tier-priority`): `interactive` queues first, then `async`,
    /// then the rest.
    pub fn tier_priority(mut self, tier_label: impl Into<String>) -> Self {
        self.config.tier_label = Some(tier_label.into());
        self
    }

    /// Where the runtime reads time (deadlines, retry due times); default
    /// the system clock.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    config_setters! {
        /// Requests handled at once (default 64).
        concurrency: usize;
        /// Members peeked and claimed per poll (default 10).
        batch_size: usize;
        /// Pause between polls when the last batch was not full (default 1 s).
        poll_interval: Duration;
        /// Upper bound of one handler call (default 300 s; the deadline bounds it too).
        request_timeout: Duration;
        /// How long shutdown waits for in-flight work (default 120 s).
        drain_timeout: Duration;
        /// How long a pool gate's `Wait` may hold a request before it is
        /// requeued (default 5 m; zero: until the deadline).
        gate_wait_timeout: Duration;
    }

    /// Checks every setting and takes each queue's routing from the store's
    /// config; the first problem comes back as a [`BuildError`] naming the
    /// setting and its fix.
    pub fn build(self) -> Result<Runtime, BuildError> {
        let RuntimeBuilder {
            store,
            mut config,
            handler,
            gates,
            clock,
            pod,
        } = self;
        config.validate()?;
        let pools = Pools::new(&config, gates)?;
        let handler = handler.ok_or(BuildError::NoHandler)?;
        for spec in &mut config.queues {
            route_from_store(spec, store.config())?;
        }
        let owner = OwnerToken::for_pod(pod.as_deref(), rand::random());
        Ok(Runtime::assemble(
            store, handler, pools, config, clock, owner,
        ))
    }
}

/// Fills `spec`'s routing from the store's config, refusing a spec that
/// names another list or TTL than the store routes its queue by.
fn route_from_store(spec: &mut QueueSpec, store: &StoreConfig) -> Result<(), BuildError> {
    let queue = spec.queue_name.as_str();
    let list_of_store = store.queue_result_lists.get(queue).cloned();
    let named_list = spec.result_queue_name.take().filter(|l| !l.is_empty());
    if named_list.is_some() && named_list != list_of_store {
        return Err(disagreement(
            queue,
            "result_queue_name",
            &named_list,
            &list_of_store,
        ));
    }
    spec.result_queue_name = list_of_store;
    let ttl_of_store = store.queue_result_ttls.get(queue).copied();
    if spec.result_ttl_seconds.is_some() && spec.result_ttl_seconds != ttl_of_store {
        let named = spec.result_ttl_seconds;
        return Err(disagreement(
            queue,
            "result_ttl_seconds",
            &named,
            &ttl_of_store,
        ));
    }
    spec.result_ttl_seconds = ttl_of_store;
    Ok(())
}

fn disagreement<T: std::fmt::Debug>(
    queue: &str,
    setting: &'static str,
    runtime: &Option<T>,
    store: &Option<T>,
) -> BuildError {
    let shown = |v: &Option<T>| v.as_ref().map_or("unset".to_owned(), |v| format!("{v:?}"));
    BuildError::RouteDisagrees {
        queue: queue.to_owned(),
        setting,
        runtime: shown(runtime),
        store: shown(store),
    }
}

#[cfg(test)]
#[path = "builder_tests.rs"]
mod tests;
