//! `sweep`: the shutdown sweep, `lua/release.lua` for every claim still held (not a delivery).

use super::release::return_claims;
use crate::store::RedisStore;
use claim_core::{Generation, Op, OwnerToken, StoreError};

pub(crate) async fn sweep(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    generations: &[Generation],
) -> Result<Vec<bool>, StoreError> {
    return_claims(store, Op::Sweep, queue, owner, generations).await
}
