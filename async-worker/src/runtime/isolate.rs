//! Claiming a batch the store refused for good in halves, so one bad member cannot hold up the rest of its poll.

use super::Shared;
use super::candidate::Candidate;
use super::consumer::Consumer;
use claim_core::StoreError;
use claim_core::store::{ClaimOutcome, ClaimRequest};

/// What one poll's claims did.
#[derive(Default)]
pub(super) struct Poll {
    /// Members another replica took first.
    pub lost: usize,
    /// A claim call failed for a reason not about its members: pause before the next poll.
    pub failed: bool,
    /// At least one claim call was answered.
    pub answered: bool,
    /// Members refused on their own, with the refusal.
    pub refused: Vec<(Candidate, StoreError)>,
    /// Members the queue gate left pending.
    pub held_back: usize,
}

impl Poll {
    /// A claim call was answered: its claims go to `consumer`'s dispatch.
    pub async fn dispatch(
        &mut self,
        consumer: &Consumer,
        chunk: Vec<Candidate>,
        outcomes: Vec<ClaimOutcome>,
    ) {
        self.answered = true;
        let handed = consumer.dispatch(chunk, outcomes).await;
        self.lost += handed.lost;
        // Its members went back to pending: pause before peeking them again.
        self.failed |= handed.fetch_failed;
    }

    /// A claim call failed for a reason not about its members (noted for readiness).
    pub fn store_failed(&mut self, shared: &Shared, error: &StoreError) {
        shared.signals.note_store_error(error);
        self.failed = true;
    }
}

/// Claims a refused batch in halves, down to single members, dispatching
/// what is claimed and collecting the members refused alone. At most
/// 2n - 1 calls for n members, once per poll (and a refused poll is
/// followed by a pause), so even a store that refuses everything costs a
/// bounded number of calls per poll interval.
pub(super) async fn isolate(
    consumer: &Consumer,
    mut refused: Vec<Candidate>,
    error: claim_core::StoreError,
    poll: &mut Poll,
) {
    let Consumer { shared, queue, .. } = consumer;
    if refused.len() == 1 {
        poll.refused.extend(refused.pop().map(|c| (c, error)));
        return;
    }
    let half = refused.split_off(refused.len() / 2);
    let mut stack = vec![half, refused];
    while let Some(mut chunk) = stack.pop() {
        let items: Vec<ClaimRequest> = chunk
            .iter()
            .map(|c| ClaimRequest {
                member: c.entry.member.clone(),
                generation: c.generation.clone(),
            })
            .collect();
        match shared.store.claim(shared.owner.on(queue), &items).await {
            Ok(outcomes) => poll.dispatch(consumer, chunk, outcomes).await,
            Err(e) if e.is_transient() => {
                poll.store_failed(shared, &e);
                if e.may_have_happened() {
                    consumer.release_unknown(chunk).await;
                }
            }
            Err(e) if chunk.len() == 1 => {
                shared.signals.note_store_error(&e);
                poll.refused.extend(chunk.pop().map(|c| (c, e)));
            }
            Err(e) => {
                shared.signals.note_store_error(&e);
                let half = chunk.split_off(chunk.len() / 2);
                stack.push(half);
                stack.push(chunk);
            }
        }
    }
}
