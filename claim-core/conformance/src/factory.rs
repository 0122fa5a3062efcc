//! What the checks run on: a factory of fresh stores, one per fixture, and the time its fixtures start at.

use async_trait::async_trait;
use claim_core::clock::ManualClock;
use claim_core::store::{ClaimStore, StoreConfig};
use claim_core::types::Millis;
use claim_core::{ClaimProducer, ListReads};
use std::sync::Arc;

/// The suite's start time: 2023-11-14T22:13:20Z.
pub const T0: Millis = Millis(1_700_000_000_000);

/// What a check needs of a store: the worker's calls ([`ClaimStore`]), a
/// producer's ([`ClaimProducer`]) to fill it, and whole-list reads
/// ([`ListReads`]) to see what it wrote. Every type with the three is one.
pub trait CheckedStore: ClaimStore + ClaimProducer + ListReads {}

impl<S: ClaimStore + ClaimProducer + ListReads + ?Sized> CheckedStore for S {}

/// Builds fresh, empty stores for the checks.
///
/// Each call must return a store that shares nothing with earlier ones (a
/// Redis factory gives each a random key prefix), with `config` and time
/// taken from `clock`.
#[async_trait]
pub trait StoreFactory: Send + Sync {
    type Store: CheckedStore;
    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> Self::Store;

    /// Where the checks' fixtures start their clocks: [`T0`], unless the
    /// runner says otherwise ([`Started`]).
    fn start(&self) -> Millis {
        T0
    }
}

/// A factory whose fixtures start at `start`: how the runner passes the
/// server's own time to the server-time pass (and [`T0`] to the plain one).
#[derive(Debug)]
pub struct Started<F> {
    pub factory: F,
    pub start: Millis,
}

#[async_trait]
impl<F: StoreFactory> StoreFactory for Started<F> {
    type Store = F::Store;

    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> F::Store {
        self.factory.make(config, clock).await
    }

    fn start(&self) -> Millis {
        self.start
    }
}
