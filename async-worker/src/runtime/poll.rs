//! One queue's poll loop: peek, sort out what cannot run, claim in batches (a batch the store refuses for good in halves), hand to workers.
//!
//! With the gate fully open a poll peeks [`PREFETCH`] batches and sends
//! their claims together: Redis runs them back to back while the first
//! batch is handed out, so it never waits for this consumer's next round
//! trip, and one peek serves several claims.
//!
//! Several replicas peek the same head of the queue. A replica that lost
//! most of a poll to a faster one does not peek that head again: it moves
//! to another window of the first few (see [`Spread`]), so replicas spread
//! over different windows instead of turning every lost race into two wasted
//! round trips.

use super::Shared;
use super::candidate::Candidate;
use super::consumer::{Consumer, PauseFlag};
use super::spread::Spread;
use crate::config::QueueSpec;
use crate::metrics;
use claim_core::store::{ClaimRequest, PendingEntry};
use claim_core::{Generation, StoreError};
use futures::StreamExt;
use futures::stream::FuturesOrdered;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Claim calls sent together per poll when the gate is fully open.
const PREFETCH: usize = 2;

/// Polls until `stop` fires. Returns claims taken but not handed over
/// (hand-off cancelled) to the caller by releasing them itself.
pub async fn run(shared: Arc<Shared>, spec: QueueSpec, stop: CancellationToken) {
    let tier_label = shared.config.tier_label.as_deref().unwrap_or_default();
    let consumer = Consumer {
        queue: spec.queue_name.as_str().into(),
        pool: shared.pools.pool(&spec.pool_name),
        gate: shared.pools.queue_gate(&spec.id),
        tier: super::tiers::tier_of(&spec.labels, tier_label),
        shared,
        spec,
        stop,
    };
    consumer.poll_until_stopped().await;
}

impl Consumer {
    async fn poll_until_stopped(&self) {
        let Consumer {
            shared,
            spec,
            queue,
            stop,
            pool,
            ..
        } = self;
        let batch_size = shared.config.batch_size;
        let mut spread = Spread::new();
        let mut pause = PauseFlag::new(shared.config.poll_interval);
        // Set while this queue waits for a worker and claims what it found:
        // the pool's lower tiers hold back meanwhile (see `tiers`).
        let mut hungry = None;
        while !stop.is_cancelled() {
            if pause.paused(shared, spec, queue).await {
                hungry = None;
                self.idle().await;
                continue;
            }
            if let Some(order) = &pool.tiers
                && order.outranked(self.tier)
            {
                tokio::select! {
                    () = order.changed() => {}
                    () = tokio::time::sleep(shared.config.poll_interval) => {}
                    () = stop.cancelled() => break,
                }
                continue;
            }
            let free = pool.permits.available_permits();
            if free == 0 {
                if hungry.is_none() {
                    hungry = pool.tiers.as_ref().map(|order| order.hungry(self.tier));
                }
                tokio::select! {
                    permit = pool.permits.clone().acquire_owned() => drop(permit),
                    () = stop.cancelled() => break,
                }
                continue;
            }
            let budget = self.budget().await;
            // Go's floor(batch x budget): a budget under 1/batch closes, and
            // NaN (a source passing one through) closes too.
            let allowed = (batch_size as f64 * budget.min(1.0)).floor();
            if allowed.is_nan() || allowed < 1.0 {
                count_gate_closed(shared, queue).await;
                hungry = None;
                self.idle().await;
                continue;
            }
            let want = (allowed as usize).min(batch_size).min(free);
            // Prefetch only what the gate allows in full.
            let depth = if budget >= 1.0 { PREFETCH } else { 1 };
            let window = (want * depth).min(free);
            let offset = spread.slot * window;
            let entries = match shared.store.peek(queue, offset, window).await {
                Ok(entries) => entries,
                Err(e) => {
                    shared.signals.note_store_error(&e);
                    tracing::warn!(queue = %spec.id, error = %e, "peek failed");
                    hungry = None;
                    self.idle().await;
                    continue;
                }
            };
            if entries.is_empty() {
                hungry = None;
                if offset == 0 {
                    self.idle().await;
                }
                // Past the end of a short queue: back to its head at once.
                spread.slot = 0;
                continue;
            }
            let peeked = entries.len();
            let poll = self.claim_and_dispatch(entries, want).await;
            hungry = None;
            spread.after(peeked, poll.lost);
            // A poll the gate held back entirely would peek the same head
            // again at once: wait instead.
            let all_held_back = poll.held_back == peeked;
            if poll.failed || all_held_back || (peeked < window && poll.lost * 2 <= peeked) {
                self.idle().await;
            }
        }
    }

    /// Claims what can be claimed, in calls of at most `batch` sent together,
    /// and hands each call's claims on as it answers. A batch the store refuses
    /// for good is claimed in halves so one bad member cannot hold up the rest.
    async fn claim_and_dispatch(&self, entries: Vec<PendingEntry>, batch: usize) -> Poll {
        let Consumer {
            shared,
            spec,
            queue,
            ..
        } = self;
        let mut parsed = Vec::with_capacity(entries.len());
        for entry in entries {
            match Candidate::of(entry) {
                Ok(candidate) => parsed.push(candidate),
                Err((entry, e)) => self.dead_letter(&entry, &e).await,
            }
        }
        let (mut candidates, held_back) = self.admit(parsed).await;
        let mut calls = FuturesOrdered::new();
        while !candidates.is_empty() {
            let rest = candidates.split_off(batch.min(candidates.len()));
            let mut chunk = std::mem::replace(&mut candidates, rest);
            // The generations travel in the claim requests and come back after.
            let items: Vec<ClaimRequest> = chunk
                .iter_mut()
                .map(|c| ClaimRequest {
                    member: c.entry.member.clone(),
                    generation: std::mem::replace(&mut c.generation, Generation::new("", "")),
                })
                .collect();
            calls.push_back(async move {
                let outcomes = shared.store.claim(shared.owner.on(queue), &items).await;
                for (c, item) in chunk.iter_mut().zip(items) {
                    c.generation = item.generation;
                }
                (chunk, outcomes)
            });
        }
        let mut poll = Poll {
            held_back,
            ..Poll::default()
        };
        while let Some((chunk, outcomes)) = calls.next().await {
            match outcomes {
                Ok(outcomes) => self.dispatch(chunk, outcomes, &mut poll).await,
                Err(e) if e.may_have_happened() => {
                    poll.store_failed(shared, &e);
                    // The claim may have happened without this runtime knowing it
                    // holds the members: nobody would renew them, and they would
                    // wait a whole lease and count a delivery. Release them now;
                    // release is owner-checked, so members not claimed are untouched.
                    tracing::warn!(queue = %spec.id, error = %e, "claim outcome unknown; releasing the batch");
                    self.release_unknown(chunk).await;
                }
                Err(e) if !e.is_transient() => {
                    shared.signals.note_store_error(&e);
                    tracing::warn!(queue = %spec.id, error = %e, members = chunk.len(), "claim refused; claiming the batch in halves to isolate the cause");
                    isolate(self, chunk, e, &mut poll).await;
                }
                Err(e) => {
                    // Nothing was claimed; the members stay pending and the
                    // next poll, after a pause, tries again.
                    poll.store_failed(shared, &e);
                    tracing::warn!(queue = %spec.id, error = %e, "claim failed")
                }
            }
        }
        // A member the store refuses on its own while it serves the others is
        // unservable: it goes to the dead set with the reason (nothing is lost;
        // an operator can redrive it). When nothing was served the refusal is
        // about the store, not the member: everything stays pending.
        for (candidate, error) in std::mem::take(&mut poll.refused) {
            if poll.answered {
                let reason = format!("claim refused: {error}");
                tracing::error!(queue = %spec.id, request = %candidate.generation, %reason, "claim refused for this member alone; moving it to the dead set");
                if self.park_dead(&candidate.entry, &reason).await {
                    metrics::dead_lettered(queue, "claim_refused", 1);
                }
            } else {
                poll.failed = true;
            }
        }
        poll
    }
}

/// Counts a poll the gate held back, as Go does: only while requests are
/// pending (an idle queue was not held back).
async fn count_gate_closed(shared: &Shared, queue: &str) {
    if let Ok(d) = shared.store.depths(queue).await
        && d.pending > 0
    {
        metrics::gate_decision(queue, metrics::GateReason::GateClosed);
    }
}

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
    error: StoreError,
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
            Ok(outcomes) => consumer.dispatch(chunk, outcomes, poll).await,
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
