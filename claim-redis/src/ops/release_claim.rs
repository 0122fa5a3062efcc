//! `release_claim`: runs `lua/release_claim.lua`, ending one generation's claim now whoever holds it (dropped, not returned, when the generation is answered; hash-tagged, its markers are read first: `cluster::answered`).

use super::cluster::answered::{claimed_markers, forget_payloads};
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::{Generation, Op, OwnerToken, StoreError, wire};

pub(crate) async fn release_claim(
    store: &RedisStore,
    queue: &str,
    generation: &Generation,
) -> Result<Option<OwnerToken>, StoreError> {
    let keys = store.keys();
    let q = keys.queue(queue);
    // Hash-tagged: the marker value to decide by, read from the slots it
    // may lie in (plain: the script reads the marker in KEYS itself).
    let marker = match store.layout() {
        KeyLayout::Plain => None,
        KeyLayout::HashTagged => {
            let gens = [generation];
            let values = claimed_markers(store, Op::ReleaseClaim, queue, &gens, None).await?;
            values.into_iter().next()
        }
    };
    let script = &store.scripts().release_claim;
    let mut call = script.prepare_invoke();
    for key in [&q.pending, &q.claimed, &q.owners, &q.index, &q.deliveries] {
        call.key(key);
    }
    call.key(keys.marker_for(&q.pending, generation));
    let payload = keys.payload(&wire::payload_key(&generation.id, &generation.token));
    if marker.is_none() {
        call.key(&payload).key(keys.clock_side());
    }
    call.arg(generation.claim_key()).arg(store.time_arg());
    if let Some(marker) = &marker {
        call.arg(marker.as_str());
    }
    let on = [q.claimed.as_bytes()];
    let ended: Option<(String, i64)> = store
        .conn()
        .script(Op::ReleaseClaim, script, on, &call)
        .await?;
    let answered = ended.as_ref().is_some_and(|(_, answered)| *answered == 1);
    if answered && marker.is_some() {
        // Hash-tagged: the payload key lies in its own slot.
        forget_payloads(store, Op::ReleaseClaim, std::iter::once(generation)).await;
    }
    tracing::info!(queue, id = %generation.id, released = ended.is_some(), answered, "claim released by an operator");
    Ok(ended.map(|(owner, _)| OwnerToken::new(owner)))
}
