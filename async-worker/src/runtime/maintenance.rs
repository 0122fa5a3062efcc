//! Background loops: the heartbeater, the reclaimer, the retry promoter and the depth sampler.

use super::Shared;
use super::held::StopReason;
use crate::admin::stats::member_age;
use crate::metrics::{self, QueueCount};
use claim_core::Generation;
use claim_core::store::RenewOutcome;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Claims renewed (or checked for cancellation) per store call.
const RENEW_CHUNK: usize = 500;
/// Expired claims or due retries handled per store call.
const MAINTENANCE_BATCH: usize = 500;

/// Runs `tick` every `period` until `stop` fires.
async fn every<F, Fut>(period: Duration, stop: CancellationToken, mut tick: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut interval = tokio::time::interval(period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = interval.tick() => tick().await,
            () = stop.cancelled() => return,
        }
    }
}

/// Renews every held lease each heartbeat interval (ttl / 3, clamped 1..30 s).
/// A claim another owner holds is dropped and its work stopped; a request the
/// producer cancelled has its work stopped and is answered `CANCELLED`.
pub async fn heartbeat(shared: Arc<Shared>, stop: CancellationToken) {
    let ttl = Duration::from_millis(shared.store.config().lease_ttl_ms);
    let period = claim_core::lease::heartbeat_interval(ttl);
    every(period, stop, || renew_all(&shared)).await;
}

pub async fn renew_all(shared: &Shared) {
    for (queue, generations) in shared.held.by_queue() {
        for chunk in generations.chunks(RENEW_CHUNK) {
            match shared.store.renew(shared.owner.on(&queue), chunk).await {
                Ok(outcomes) => {
                    let mut lost = 0;
                    for (generation, outcome) in chunk.iter().zip(outcomes) {
                        match outcome {
                            RenewOutcome::Renewed { lease_expiry } => {
                                shared.held.set_lease(&queue, generation, lease_expiry)
                            }
                            RenewOutcome::Lost => {
                                let Some(flight) = shared.held.remove(&queue, generation) else {
                                    continue;
                                };
                                // Ended by this runtime's own ack or park
                                // between the snapshot and the renewal.
                                if !flight.is_handed_over() {
                                    lost += 1;
                                    flight.stop(StopReason::LeaseLost);
                                }
                            }
                        }
                    }
                    if lost > 0 {
                        tracing::warn!(%queue, lost, "leases lost to another owner; their work is stopped");
                    }
                    shared.stats.tally(&queue, QueueCount::LeaseLost, lost);
                }
                Err(e) => {
                    shared.signals.note_store_error(&e);
                    tracing::warn!(%queue, error = %e, "renew failed; retrying next heartbeat");
                    fence_lapsed(shared, &queue, chunk);
                }
            }
            stop_cancelled(shared, &queue, chunk).await;
        }
    }
}

/// Local lease fencing: when renewal cannot reach the store, work whose last
/// confirmed lease has run out is stopped, since another replica may already
/// have reclaimed and rerun it. Its result is not offered to ack; the claim,
/// if still ours, lapses and the request is redelivered.
fn fence_lapsed(shared: &Shared, queue: &Arc<str>, chunk: &[Generation]) {
    let now = shared.clock.now();
    let mut lapsed = 0;
    for generation in chunk {
        let expired = shared
            .held
            .lease_expiry(queue, generation)
            .is_some_and(|expiry| expiry <= now);
        if expired && let Some(flight) = shared.held.remove(queue, generation) {
            flight.stop(StopReason::LeaseLost);
            lapsed += 1;
        }
    }
    if lapsed > 0 {
        tracing::warn!(%queue, lapsed, "leases ran out while the store was unreachable; their work is stopped");
    }
    shared.stats.tally(queue, QueueCount::LeaseLost, lapsed);
}

async fn stop_cancelled(shared: &Shared, queue: &Arc<str>, chunk: &[Generation]) {
    let Ok(cancelled) = shared.store.cancelled(chunk).await else {
        return;
    };
    for (generation, _) in chunk.iter().zip(cancelled).filter(|(_, c)| *c) {
        if let Some(flight) = shared.held.flight(queue, generation) {
            flight.stop(StopReason::Cancelled);
        }
    }
}

/// Every reclaim interval, for each queue, returns expired claims until none remain.
pub async fn reclaim(shared: Arc<Shared>, stop: CancellationToken) {
    let period = shared.config.reclaim_interval;
    every(period, stop, || reclaim_all(&shared)).await;
}

/// Reclaims every queue at once, so one queue's failing or slow call never
/// delays another's; each queue scans batch after batch until nothing
/// expired is left, and an error ends that queue's scan until the next tick
/// (a store that refuses a queue's batch for good costs one call a tick).
pub async fn reclaim_all(shared: &Shared) {
    let scans = shared
        .config
        .queues
        .iter()
        .map(|spec| reclaim_queue(shared, spec));
    futures::future::join_all(scans).await;
}

async fn reclaim_queue(shared: &Shared, spec: &crate::config::QueueSpec) {
    loop {
        match shared
            .store
            .reclaim_expired(&spec.queue_name, MAINTENANCE_BATCH)
            .await
        {
            Ok(report) => {
                let expired = report.redelivered + report.dead_lettered;
                if expired > 0 {
                    tracing::info!(queue = %spec.id, redelivered = report.redelivered, dead_lettered = report.dead_lettered, "expired claims reclaimed");
                    metrics::count(&spec.queue_name, QueueCount::ClaimsExpired, expired);
                    shared
                        .stats
                        .redelivered
                        .fetch_add(report.redelivered, Ordering::Relaxed);
                }
                if report.dead_lettered > 0 {
                    metrics::dead_lettered(
                        &spec.queue_name,
                        "delivery_limit",
                        report.dead_lettered,
                    );
                    let code = claim_core::wire::ErrorCode::DeliveryLimit.as_str();
                    metrics::results_by_store(&spec.queue_name, code, report.dead_lettered);
                }
                if report.ghosts_repaired > 0 {
                    tracing::warn!(queue = %spec.id, repaired = report.ghosts_repaired, "claim bookkeeping repaired");
                }
                if !report.more {
                    return;
                }
            }
            Err(e) => {
                shared.signals.note_store_error(&e);
                tracing::warn!(queue = %spec.id, error = %e, "reclaim failed; retrying next interval");
                return;
            }
        }
    }
}

/// Moves due retries back to their queues.
pub async fn promote(shared: Arc<Shared>, stop: CancellationToken) {
    let period = shared.config.promote_interval;
    every(period, stop, || async {
        loop {
            match shared.store.promote_due(MAINTENANCE_BATCH).await {
                Ok(n) if n >= MAINTENANCE_BATCH => continue,
                Ok(_) => break,
                Err(e) => {
                    shared.signals.note_store_error(&e);
                    tracing::warn!(error = %e, "promoting due retries failed; retrying next interval");
                    break;
                }
            }
        }
    })
    .await;
}

/// Samples each queue's backlog (pending members), claim and dead depths
/// and the age of its head of pending, and the retry set's size, into
/// gauges; a failed depth read reports the backlog 0 and its source
/// unavailable, a failed head or retry read leaves its gauge as it was.
pub async fn sample_depths(shared: Arc<Shared>, stop: CancellationToken) {
    let period = shared.config.backlog_poll_interval;
    if period.is_zero() {
        // `--metrics-backlog-poll-interval 0`: the operator turned the reads off.
        return;
    }
    every(period, stop, || async {
        for spec in &shared.config.queues {
            let queue = &spec.queue_name;
            match shared.store.depths(queue).await {
                Ok(d) => metrics::depths(queue, &d),
                Err(_) => metrics::depths_unavailable(queue),
            }
            if let Ok(head) = shared.store.peek(queue, 0, 1).await {
                let now = shared.clock.now();
                let age = head.first().and_then(|e| member_age(&e.member, now));
                let age = Duration::from_millis(age.unwrap_or(0));
                metrics::oldest_pending_age(queue, age);
            }
        }
        if let Ok(entries) = shared.store.retry_depth().await {
            metrics::retry_depth(entries);
        }
    })
    .await;
}
