//! In-process `ClaimStore`: the claim-core model made shared behind a lock.
//!
//! This is not a second implementation: every operation is one call into
//! [`claim_core::model::Model`] under a mutex, with `now` read from the
//! store's clock, routed from the one list of methods,
//! `claim_core::store_methods!`. Use it for tests, single-process deployments and the demo.
//! Nothing survives the process.

use claim_core::admin::{ClaimAdmin, Redrive};
use claim_core::model::Model;
use claim_core::store::StoreConfig;
use claim_core::{Clock, Generation, Member, Millis, OwnerToken, StoreError, route_store};
use std::sync::{Arc, Mutex, MutexGuard};

/// The memory store's default clock (claim-core's one system clock).
pub use claim_core::SystemClock;

/// The memory store. Cheap to clone; clones share state.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    config: StoreConfig,
    model: Arc<Mutex<Model>>,
    clock: Arc<dyn Clock>,
}

impl MemoryStore {
    /// A store on the system clock.
    pub fn new(config: StoreConfig) -> Self {
        Self::with_clock(config, Arc::new(SystemClock))
    }

    /// A store whose time comes from `clock` (a `ManualClock` in tests, or a
    /// clock following tokio's paused time).
    pub fn with_clock(config: StoreConfig, clock: Arc<dyn Clock>) -> Self {
        MemoryStore {
            model: Arc::new(Mutex::new(Model::new(config.clone()))),
            config,
            clock,
        }
    }

    /// A copy of the whole model, for tests comparing stores with the reference.
    pub fn snapshot(&self) -> Model {
        self.lock().clone()
    }

    fn lock(&self) -> MutexGuard<'_, Model> {
        // A panic while holding the lock leaves the model as the last completed
        // transition left it (every transition is applied before it returns),
        // so the state behind a poisoned lock is still consistent.
        self.model.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn with<T>(&self, f: impl FnOnce(&mut Model, Millis) -> T) -> Result<T, StoreError> {
        let now = self.clock.now();
        Ok(f(&mut self.lock(), now))
    }
}

/// One call of the model: `now` and `ping` answer from the store itself;
/// every other method is the model's method of its name, given the clock's
/// time when the list marks it `[now]` (`enqueue`'s answer is already a
/// `Result`).
macro_rules! model_call {
    ($store:ident, now()) => {
        Ok($store.clock.now())
    };
    ($store:ident, ping()) => {
        Ok(())
    };
    // The model's enqueue may refuse its input: its answer is already a Result.
    ($store:ident, enqueue($($arg:ident),*) now) => {
        $store.with(|m, now| m.enqueue($($arg,)* now))?
    };
    ($store:ident, $name:ident($($arg:ident),*) now) => {
        $store.with(|m, now| m.$name($($arg,)* now))
    };
    ($store:ident, $name:ident($($arg:ident),*)) => {
        $store.with(|m, _| m.$name($($arg),*))
    };
}

claim_core::store_methods!(route_store MemoryStore => config, model_call;);

/// The operator's operations: the model's, under the same lock.
#[claim_core::layer::async_trait]
impl ClaimAdmin for MemoryStore {
    async fn redrive_dead(
        &self,
        queue: &str,
        members: &[Member],
    ) -> Result<Vec<Redrive>, StoreError> {
        self.with(|m, now| m.redrive_dead(queue, members, now))
    }

    async fn purge_dead(&self, queue: &str, members: &[Member]) -> Result<Vec<bool>, StoreError> {
        self.with(|m, _| m.purge_dead(queue, members))
    }

    async fn release_claim(
        &self,
        queue: &str,
        generation: &Generation,
    ) -> Result<Option<OwnerToken>, StoreError> {
        self.with(|m, now| m.release_claim(queue, generation, now))
    }

    async fn set_paused(&self, queue: &str, paused: bool) -> Result<bool, StoreError> {
        self.with(|m, _| m.set_paused(queue, paused))
    }
}
