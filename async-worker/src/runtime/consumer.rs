//! The consumer of one queue: peek, sort out what cannot run, claim in one batch, hand to workers.

use super::Shared;
use super::execute::{execute, terminal};
use super::writer::Delivery;
use crate::config::QueueSpec;
use crate::gate::GateDecision;
use crate::handler::Request;
use crate::metrics;
use claim_core::store::{ClaimOutcome, ClaimRequest, PendingEntry};
use claim_core::wire::{self, ErrorCode, MemberError, ParsedMember, ResultRecord};
use claim_core::{Generation, Millis};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio_util::sync::CancellationToken;

/// What the consumer decided about one peeked member before claiming it.
enum Plan {
    Dispatch(Box<ParsedMember>),
    /// Parsable as far as its id, but invalid: claim it and record why.
    Invalid(String),
}

struct Candidate {
    entry: PendingEntry,
    generation: Generation,
    plan: Plan,
}

/// Polls until `stop` fires. Returns claims taken but not handed over
/// (hand-off cancelled) to the caller by releasing them itself.
pub async fn run(shared: Arc<Shared>, spec: QueueSpec, stop: CancellationToken) {
    let queue: Arc<str> = spec.queue_name.as_str().into();
    metrics::register_queue(&queue);
    let batch_size = shared.config.batch_size;
    let mut offset = 0;
    while !stop.is_cancelled() {
        let free = shared.permits.available_permits();
        if free == 0 {
            tokio::select! {
                permit = shared.permits.clone().acquire_owned() => drop(permit),
                () = stop.cancelled() => break,
            }
            continue;
        }
        let want = match shared.gate.decide(&spec.id).await {
            Ok(GateDecision::Open(fraction)) if fraction > 0.0 => {
                ((batch_size as f64 * fraction.min(1.0)).ceil() as usize)
                    .clamp(1, batch_size)
                    .min(free)
            }
            Ok(_) => {
                idle(&shared, &stop).await;
                continue;
            }
            Err(e) => {
                tracing::warn!(queue = %spec.id, error = %e, "gate error; not claiming");
                idle(&shared, &stop).await;
                continue;
            }
        };
        let entries = match shared.store.peek(&queue, offset, want).await {
            Ok(entries) => entries,
            Err(e) => {
                tracing::warn!(queue = %spec.id, error = %e, "peek failed");
                idle(&shared, &stop).await;
                continue;
            }
        };
        if entries.is_empty() {
            if offset == 0 {
                idle(&shared, &stop).await;
            }
            offset = 0;
            continue;
        }
        let peeked = entries.len();
        let lost = claim_and_dispatch(&shared, &spec, &queue, entries, &stop).await;
        // Several replicas peek the same head. One that lost most of its batch
        // skips past the contended head next time instead of racing for it again.
        offset = if lost * 2 > peeked {
            offset + peeked
        } else {
            0
        };
        if peeked < want && lost * 2 <= peeked {
            idle(&shared, &stop).await;
        }
    }
}

async fn idle(shared: &Shared, stop: &CancellationToken) {
    tokio::select! {
        () = tokio::time::sleep(shared.config.poll_interval) => {}
        () = stop.cancelled() => {}
    }
}

/// Claims what can be claimed and hands it on. Returns how many members
/// another replica took first.
async fn claim_and_dispatch(
    shared: &Arc<Shared>,
    spec: &QueueSpec,
    queue: &Arc<str>,
    entries: Vec<PendingEntry>,
    stop: &CancellationToken,
) -> usize {
    let mut candidates = Vec::with_capacity(entries.len());
    for entry in entries {
        match wire::parse_member(entry.member.as_bytes()) {
            Ok(parsed) => {
                let generation = Generation::new(parsed.id.clone(), parsed.token.clone());
                candidates.push(Candidate {
                    entry,
                    generation,
                    plan: Plan::Dispatch(Box::new(parsed)),
                });
            }
            Err(MemberError::Invalid { id, field, reason }) => {
                let generation = Generation::new(id, lenient_token(entry.member.as_bytes()));
                let why = format!("invalid {field}: {reason}");
                candidates.push(Candidate {
                    entry,
                    generation,
                    plan: Plan::Invalid(why),
                });
            }
            Err(e) => dead_letter(shared, queue, &entry, &e).await,
        }
    }
    if candidates.is_empty() {
        return 0;
    }
    let items: Vec<ClaimRequest> = candidates
        .iter()
        .map(|c| ClaimRequest {
            member: c.entry.member.clone(),
            generation: c.generation.clone(),
        })
        .collect();
    let outcomes = match shared.store.claim(queue, &shared.owner, &items).await {
        Ok(outcomes) => outcomes,
        Err(e) => {
            // If the claim happened after all, its leases lapse and the
            // reclaimer returns the members: nothing is lost.
            tracing::warn!(queue = %spec.id, error = %e, "claim failed");
            return 0;
        }
    };
    let now = shared.clock.now();
    let mut lost = 0;
    let mut hand_off_cancelled = Vec::new();
    let mut dispatched = 0;
    for (candidate, outcome) in candidates.into_iter().zip(outcomes) {
        let (cancelled, redeliveries, lease_expiry) = match outcome {
            ClaimOutcome::Claimed {
                cancelled,
                redeliveries,
                lease_expiry,
                ..
            } => (cancelled, redeliveries, lease_expiry),
            ClaimOutcome::NotPending => {
                lost += 1;
                continue;
            }
            ClaimOutcome::DuplicateDropped => {
                metrics::duplicates_suppressed(queue, 1);
                continue;
            }
        };
        let flight = shared
            .held
            .insert(queue, candidate.generation.clone(), lease_expiry);
        shared.stats.claimed.fetch_add(1, Ordering::Relaxed);
        let Plan::Dispatch(parsed) = candidate.plan else {
            let Plan::Invalid(why) = candidate.plan else {
                unreachable!()
            };
            let list = result_list(shared, spec, None);
            let record =
                ResultRecord::error(&candidate.generation.id, ErrorCode::InvalidRequest, why);
            send(
                shared,
                terminal(
                    queue,
                    candidate.generation,
                    list,
                    record,
                    ErrorCode::InvalidRequest.as_str(),
                ),
            )
            .await;
            continue;
        };
        let deadline = Millis((parsed.deadline.max(0) as u64).saturating_mul(1000));
        let list = result_list(shared, spec, parsed.result_queue_name.as_deref());
        let early_exit = if deadline <= now {
            Some((
                ErrorCode::DeadlineExceeded,
                "deadline passed before the request was dispatched",
            ))
        } else if cancelled {
            Some((ErrorCode::Cancelled, "request cancelled by the producer"))
        } else {
            None
        };
        if let Some((code, message)) = early_exit {
            let record = ResultRecord::error(&candidate.generation.id, code, message);
            send(
                shared,
                terminal(queue, candidate.generation, list, record, code.as_str()),
            )
            .await;
            continue;
        }
        let permit = match (
            stop.is_cancelled(),
            shared.permits.clone().try_acquire_owned(),
        ) {
            (false, Ok(permit)) => permit,
            _ => {
                hand_off_cancelled.push(candidate.generation);
                continue;
            }
        };
        if let Some(created) = parsed.created {
            metrics::queue_residence(queue, now.0 as f64 / 1000.0 - created as f64);
        }
        let request = Request {
            queue_id: spec.id.clone(),
            queue_name: spec.queue_name.clone(),
            generation: candidate.generation,
            member: candidate.entry.member,
            parsed: *parsed,
            deadline,
            redeliveries,
        };
        dispatched += 1;
        shared.spawn(
            &shared.tasks,
            execute(shared.clone(), request, list, flight, permit),
        );
    }
    metrics::requests(queue, dispatched);
    if !hand_off_cancelled.is_empty() {
        release(shared, queue, &hand_off_cancelled).await;
    }
    lost
}

/// Returns claims that were never handed to a worker (outcome: released).
async fn release(shared: &Shared, queue: &Arc<str>, generations: &[Generation]) {
    match shared
        .store
        .release(queue, &shared.owner, generations)
        .await
    {
        Ok(released) => {
            let n = released.iter().filter(|r| **r).count();
            shared.stats.released.fetch_add(n, Ordering::Relaxed);
        }
        Err(e) => {
            tracing::warn!(error = %e, "release failed; the claims will lapse and be redelivered")
        }
    }
    for generation in generations {
        shared.held.remove(queue, generation);
    }
}

async fn send(shared: &Shared, delivery: Delivery) {
    let _ = shared.deliveries.send(delivery).await;
}

async fn dead_letter(shared: &Shared, queue: &Arc<str>, entry: &PendingEntry, error: &MemberError) {
    let reason = error.to_string();
    tracing::warn!(queue = %queue, bytes = entry.member.len(), %reason, "unparsable member moved to the dead set");
    match shared
        .store
        .dead_letter(queue, &entry.member, &reason)
        .await
    {
        Ok(true) => {
            metrics::dead_lettered(queue, "unparsable", 1);
            shared.stats.dead_lettered.fetch_add(1, Ordering::Relaxed);
        }
        Ok(false) => {}
        Err(e) => tracing::warn!(error = %e, "dead_letter failed; the member stays pending"),
    }
}

/// The queue's configured result list, else the member's, else the default.
fn result_list(shared: &Shared, spec: &QueueSpec, member_list: Option<&str>) -> String {
    spec.result_queue_name
        .as_deref()
        .or(member_list.filter(|l| !l.is_empty()))
        .unwrap_or(&shared.config.default_result_list)
        .to_owned()
}

/// The request token of a member that failed validation, read as loosely as
/// possible so its INVALID_REQUEST record is keyed to the right generation.
fn lenient_token(raw: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(raw)
        .ok()
        .and_then(|v| {
            v.pointer("/internal/request_token")
                .and_then(|t| t.as_str())
                .map(str::to_owned)
        })
        .unwrap_or_default()
}
