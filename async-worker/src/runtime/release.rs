//! Returning claims this runtime will not work on: hand-offs the consumer cancelled, and what an uncertain claim may have taken.

use super::Shared;
use super::retry::jittered;
use claim_core::Generation;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Returns claims that were never handed to a worker (outcome: released).
pub async fn release(shared: &Shared, queue: &Arc<str>, generations: &[Generation]) {
    release_retrying(
        shared,
        queue,
        generations,
        "of claims not handed to a worker",
    )
    .await;
    for generation in generations {
        shared.held.remove(queue, generation);
    }
}

/// Attempts at a release before its claims are left to lapse.
const RELEASE_ATTEMPTS: u32 = 5;

/// Releases `generations`, retrying a transient failure a few times with
/// backoff (release is owner-checked and idempotent, so a repeat after an
/// uncertain attempt is harmless, and members not claimed are untouched).
/// A permanent refusal, or a store that stays unreachable, leaves the claims
/// to lapse and be redelivered: nothing is lost, and nothing waits forever.
pub async fn release_retrying(
    shared: &Shared,
    queue: &Arc<str>,
    generations: &[Generation],
    what: &str,
) {
    let mut backoff = std::time::Duration::from_millis(50);
    for attempt in 1..=RELEASE_ATTEMPTS {
        match shared
            .store
            .release(shared.owner.on(queue), generations)
            .await
        {
            Ok(released) => {
                let n = released.iter().filter(|r| **r).count();
                shared.stats.released.fetch_add(n, Ordering::Relaxed);
                return;
            }
            Err(e) => {
                shared.signals.note_store_error(&e);
                if !e.is_transient() || attempt == RELEASE_ATTEMPTS {
                    tracing::warn!(%queue, error = %e, claims = generations.len(), "release {what} failed; the claims will lapse and be redelivered");
                    return;
                }
                let pause = jittered(backoff);
                tracing::warn!(%queue, error = %e, retry_in = ?pause, "release {what} failed; retrying");
                tokio::time::sleep(pause).await;
                backoff *= 2;
            }
        }
    }
}
