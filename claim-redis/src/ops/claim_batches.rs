//! What `claim` does alike in both layouts around its script calls: batches of [`MAX_BATCH`], the earlier calls' claims kept when a later one fails, unkeyable generations answered without a call, and which answered copies' payloads are left to delete.

use super::release::release;
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::store::{ClaimOutcome, ClaimRequest, generations_of};
use claim_core::{OwnerToken, StoreError, wire};
use std::future::Future;

/// `(store, queue, owner, items)`: at most [`MAX_BATCH`] items of
/// `queue`, whose generations can be keyed, to claim for `owner`.
pub(crate) type Chunk<'a> = (&'a RedisStore, &'a str, &'a OwnerToken, &'a [ClaimRequest]);

/// One outcome per item of a chunk.
pub(crate) type Outcomes = Result<Vec<ClaimOutcome>, StoreError>;

/// One layout's claim script call: what [`claim_in_batches`] runs per
/// chunk.
pub(crate) trait ClaimChunk {
    fn claim_chunk(chunk: Chunk<'_>) -> impl Future<Output = Outcomes> + Send + '_;
}

/// Claims `items` with `L`'s script call in
/// calls of [`MAX_BATCH`]. When a later call fails, the claims of the
/// earlier ones are not orphaned: the batch is answered with them, the
/// failed and later items as `NotPending` (they are still pending, or were
/// released again if the failed call may have run). Items whose generation
/// cannot be keyed ([`claim_core::Generation::is_keyable`]) are answered
/// `NotPending` and never reach the script, so no claim key with two NULs
/// (the script's placeholder) can be written.
pub(crate) async fn claim_in_batches<L: ClaimChunk>(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[ClaimRequest],
) -> Result<Vec<ClaimOutcome>, StoreError> {
    if items.iter().all(|i| i.generation.is_keyable()) {
        return batches::<L>(store, queue, owner, items).await;
    }
    let keyable: Vec<ClaimRequest> = items
        .iter()
        .filter(|i| i.generation.is_keyable())
        .cloned()
        .collect();
    let mut answers = if keyable.is_empty() {
        Vec::new()
    } else {
        batches::<L>(store, queue, owner, &keyable).await?
    }
    .into_iter();
    let answer = |i: &ClaimRequest| match i.generation.is_keyable() {
        true => answers.next().unwrap_or(ClaimOutcome::NotPending),
        false => ClaimOutcome::NotPending,
    };
    Ok(items.iter().map(answer).collect())
}

async fn batches<L: ClaimChunk>(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[ClaimRequest],
) -> Result<Vec<ClaimOutcome>, StoreError> {
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(MAX_BATCH) {
        match L::claim_chunk((store, queue, owner, chunk)).await {
            Ok(outcomes) => out.extend(outcomes),
            Err(e) if out.is_empty() => return Err(e),
            Err(e) => {
                tracing::warn!(queue, error = %e, claimed = out.len(), "a later claim call failed; answering the earlier ones");
                if e.may_have_happened()
                    && let Err(e) = release(store, queue, owner, &generations_of(chunk)).await
                {
                    tracing::warn!(queue, error = %e, "release after an unknown claim outcome failed; the claims lapse after their lease");
                }
                out.resize(items.len(), ClaimOutcome::NotPending);
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// The payload keys (stored apart) of the copies `claim.lua` dropped as
/// answered and held by nobody (outcome 5): no ack is left to delete them.
pub(crate) fn answered_payload_keys(
    store: &RedisStore,
    chunk: &[ClaimRequest],
    answered: &[usize],
) -> Vec<String> {
    answered
        .iter()
        .filter_map(|&i| chunk.get(i))
        .filter_map(|item| wire::parse_member(item.member.as_bytes()).ok()?.payload_ref)
        .map(|payload_ref| store.keys().payload(&payload_ref))
        .collect()
}
