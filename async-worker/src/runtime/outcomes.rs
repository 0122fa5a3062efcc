//! What the writer does with the store's per-item answers: counters, metrics, logs, and forgetting the claims whose call was answered.
//!
//! An ack answered `pushed: false` means a terminal record already existed.
//! When an earlier call carrying the same item failed `Indeterminate` and
//! the store says the live marker was written by this very record
//! (`own_record_landed`: same digest), the uncertain call landed: it is
//! counted as a retried ack that had landed, not as a suppressed duplicate,
//! so `llm_d_async_async_duplicate_results_suppressed_total` keeps one meaning. (Either
//! test alone could misfile: an identical record from another replica, or
//! another replica's record after our uncertain call failed before running.)

use super::Shared;
use super::settlement::{Group, Settlement};
use crate::metrics::{self, QueueCount};
use claim_core::store::AckOutcome;
use std::sync::atomic::Ordering;

/// The store's reply to one writer call, item by item.
#[derive(Debug)]
pub(super) enum StoreReply {
    Acks(Vec<AckOutcome>),
    Parks(Vec<bool>),
}

/// Accounts for every item of an answered call and forgets its claim.
pub(super) fn account(shared: &Shared, group: &Group, reply: StoreReply) {
    let queue = &group.lane.0;
    let handle = metrics::queue_handle(queue);
    let stats = &shared.stats;
    let mut suppressed = 0;
    let mut landed_before = 0;
    let mut parked = 0;
    let now = shared.clock.now();
    for (i, owed) in group.items.iter().enumerate() {
        let (_, generation) = owed.settlement.claim();
        let flight = shared.held.remove(queue, generation);
        match (&owed.settlement, &reply) {
            (Settlement::Ack { code, .. }, StoreReply::Acks(outcomes)) => {
                let outcome = outcomes.get(i).copied().unwrap_or_default();
                if outcome.dead_lettered {
                    tracing::warn!(%queue, request = %generation, "result list cannot take a record; the request moved to the dead set with the reason");
                    metrics::dead_lettered(queue, "unusable_result_list", 1);
                    stats.dead_lettered.fetch_add(1, Ordering::Relaxed);
                } else if outcome.pushed {
                    handle.result(code);
                    if let Some(created) = flight.and_then(|f| f.created()) {
                        let ms = now.0 as f64 - created as f64 * 1000.0;
                        handle.message_latency(ms);
                    }
                    stats.records_pushed.fetch_add(1, Ordering::Relaxed);
                } else if owed.uncertain && outcome.own_record_landed {
                    landed_before += 1;
                } else {
                    suppressed += 1;
                }
            }
            (Settlement::Park { .. }, StoreReply::Parks(outcomes))
                if outcomes.get(i).copied().unwrap_or(false) =>
            {
                parked += 1;
            }
            // A group holds one kind; its call replies in that kind.
            _ => {}
        }
    }
    stats.tally(queue, QueueCount::DuplicatesSuppressed, suppressed);
    stats.tally(queue, QueueCount::RetriedAcksLanded, landed_before);
    stats.tally(queue, QueueCount::Retries, parked);
}
