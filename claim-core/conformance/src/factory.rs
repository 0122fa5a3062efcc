//! What the checks run on: a factory of fresh stores, one per fixture.

use async_trait::async_trait;
use claim_core::store::{ClaimStore, StoreConfig};
use claim_core::types::ManualClock;
use std::sync::Arc;

/// Builds fresh, empty stores for the checks.
///
/// Each call must return a store that shares nothing with earlier ones (a
/// Redis factory gives each a random key prefix), with `config` and time
/// taken from `clock`.
#[async_trait]
pub trait StoreFactory: Send + Sync {
    type Store: ClaimStore;
    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> Self::Store;
}
