//! `release_claim`: runs `lua/release_claim.lua`, ending one generation's claim now whoever holds it.

use crate::store::RedisStore;
use claim_core::{Generation, Op, OwnerToken, StoreError};

pub(crate) async fn release_claim(
    store: &RedisStore,
    queue: &str,
    generation: &Generation,
) -> Result<Option<OwnerToken>, StoreError> {
    let q = store.keys().queue(queue);
    let mut call = store.scripts().release_claim.prepare_invoke();
    for key in [&q.pending, &q.claimed, &q.owners, &q.index, &q.deliveries] {
        call.key(key);
    }
    call.arg(generation.claim_key());
    let owner: Option<String> = store.conn().script(Op::ReleaseClaim, &call).await?;
    tracing::info!(queue, id = %generation.id, released = owner.is_some(), "claim released by an operator");
    Ok(owner.map(OwnerToken::new))
}
