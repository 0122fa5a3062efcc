//! The retry sets a store reads, by layout: the shared one (plain), or the shared one and each registered queue's own (hash-tagged: `cluster::retry_sets`).

use super::cluster;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::{Op, StoreError};

/// The keys of every retry set to inspect, the shared (Go's) one first.
pub(crate) async fn retry_set_keys(store: &RedisStore, op: Op) -> Result<Vec<String>, StoreError> {
    match store.layout() {
        KeyLayout::Plain => Ok(vec![store.keys().retry().to_owned()]),
        KeyLayout::HashTagged => Ok(cluster::retry_sets::retry_sets(store, op)
            .await?
            .into_iter()
            .map(|(_, set)| set)
            .collect()),
    }
}
