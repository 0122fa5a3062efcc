//! The consumer of one queue: peek, sort out what cannot run, claim in batches, hand to workers.
//!
//! With the gate fully open a poll peeks [`PREFETCH`] batches and sends
//! their claims together: Redis runs them back to back while the first
//! batch is handed out, so it never waits for this consumer's next round
//! trip, and one peek serves several claims.
//!
//! Several replicas peek the same head of the queue. A replica that lost
//! most of a poll to a faster one does not peek that head again: it moves
//! to another window of the first few (see [`Spread`]), so replicas settle
//! on different windows instead of turning every lost race into two wasted
//! round trips.

use super::Shared;
use super::execute::{execute, terminal};
use super::isolate::{Poll, isolate};
use super::release::{release, release_retrying};
use super::spread::Spread;
use crate::config::QueueSpec;
use crate::gate::GateDecision;
use crate::handler::Request;
use crate::metrics;
use claim_core::store::{ClaimOutcome, ClaimRequest, PendingEntry};
use claim_core::wire::{self, ErrorCode, MemberError, ParsedMember, ResultRecord};
use claim_core::{Generation, Millis};
use futures::StreamExt;
use futures::stream::FuturesOrdered;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio_util::sync::CancellationToken;

/// What the consumer decided about one peeked member before claiming it.
enum Plan {
    Dispatch(Box<ParsedMember>),
    /// Parsable as far as its id, but invalid: claim it and record why.
    Invalid(String),
}

pub(super) struct Candidate {
    pub entry: PendingEntry,
    pub generation: Generation,
    plan: Plan,
}

/// Claim calls sent together per poll when the gate is fully open.
const PREFETCH: usize = 2;

/// Polls until `stop` fires. Returns claims taken but not handed over
/// (hand-off cancelled) to the caller by releasing them itself.
pub async fn run(shared: Arc<Shared>, spec: QueueSpec, stop: CancellationToken) {
    let queue: Arc<str> = spec.queue_name.as_str().into();
    metrics::register_queue(&queue);
    let batch_size = shared.config.batch_size;
    let mut spread = Spread::new();
    while !stop.is_cancelled() {
        let free = shared.permits.available_permits();
        if free == 0 {
            tokio::select! {
                permit = shared.permits.clone().acquire_owned() => drop(permit),
                () = stop.cancelled() => break,
            }
            continue;
        }
        let (want, depth) = match shared.gate.decide(&spec.id).await {
            Ok(GateDecision::Open(fraction)) if fraction > 0.0 => {
                let want = ((batch_size as f64 * fraction.min(1.0)).ceil() as usize)
                    .clamp(1, batch_size)
                    .min(free);
                // Prefetch only what the gate allows in full.
                let depth = if fraction >= 1.0 { PREFETCH } else { 1 };
                (want, depth)
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
        let window = (want * depth).min(free);
        let offset = spread.slot * window;
        let entries = match shared.store.peek(&queue, offset, window).await {
            Ok(entries) => entries,
            Err(e) => {
                shared.note_store_error(&e);
                tracing::warn!(queue = %spec.id, error = %e, "peek failed");
                idle(&shared, &stop).await;
                continue;
            }
        };
        if entries.is_empty() {
            if offset == 0 {
                idle(&shared, &stop).await;
            }
            // Past the end of a short queue: back to its head at once.
            spread.slot = 0;
            continue;
        }
        let peeked = entries.len();
        let poll = claim_and_dispatch(&shared, &spec, &queue, entries, want, &stop).await;
        spread.after(peeked, poll.lost);
        if poll.failed || (peeked < window && poll.lost * 2 <= peeked) {
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

/// Claims what can be claimed, in calls of at most `batch` sent together,
/// and hands each call's claims on as it answers. A batch the store refuses
/// for good is claimed in halves so one bad member cannot hold up the rest.
async fn claim_and_dispatch(
    shared: &Arc<Shared>,
    spec: &QueueSpec,
    queue: &Arc<str>,
    entries: Vec<PendingEntry>,
    batch: usize,
    stop: &CancellationToken,
) -> Poll {
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
            let outcomes = shared.store.claim(queue, &shared.owner, &items).await;
            for (c, item) in chunk.iter_mut().zip(items) {
                c.generation = item.generation;
            }
            (chunk, outcomes)
        });
    }
    let mut poll = Poll::default();
    while let Some((chunk, outcomes)) = calls.next().await {
        match outcomes {
            Ok(outcomes) => {
                poll.answered = true;
                poll.lost += dispatch(shared, spec, queue, chunk, outcomes, stop).await;
            }
            Err(e) if e.may_have_happened() => {
                shared.note_store_error(&e);
                poll.failed = true;
                // The claim may have happened without this runtime knowing it
                // holds the members: nobody would renew them, and they would
                // wait a whole lease and count a delivery. Release them now;
                // release is owner-checked, so members not claimed are untouched.
                tracing::warn!(queue = %spec.id, error = %e, "claim outcome unknown; releasing the batch");
                let generations: Vec<Generation> =
                    chunk.into_iter().map(|c| c.generation).collect();
                release_retrying(
                    shared,
                    queue,
                    &generations,
                    "after an unknown claim outcome",
                )
                .await;
            }
            Err(e) if !e.is_transient() => {
                shared.note_store_error(&e);
                tracing::warn!(queue = %spec.id, error = %e, members = chunk.len(), "claim refused; claiming the batch in halves to isolate the cause");
                isolate(shared, spec, queue, chunk, e, stop, &mut poll).await;
            }
            Err(e) => {
                // Nothing was claimed; the members stay pending and the
                // next poll, after a pause, tries again.
                shared.note_store_error(&e);
                poll.failed = true;
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
            if park_dead(shared, queue, &candidate.entry, &reason).await {
                metrics::dead_lettered(queue, "claim_refused", 1);
            }
        } else {
            poll.failed = true;
        }
    }
    poll
}

/// Hands one claim call's claims to workers (or straight to the writer when
/// they need no handler). Returns how many members another replica took first.
pub(super) async fn dispatch(
    shared: &Arc<Shared>,
    spec: &QueueSpec,
    queue: &Arc<str>,
    candidates: Vec<Candidate>,
    outcomes: Vec<ClaimOutcome>,
    stop: &CancellationToken,
) -> usize {
    let now = shared.clock.now();
    let mut lost = 0;
    let mut hand_off_cancelled = Vec::new();
    let mut dispatched = 0;
    for (candidate, outcome) in candidates.into_iter().zip(outcomes) {
        let (cancelled, redeliveries, score, lease_expiry) = match outcome {
            ClaimOutcome::Claimed {
                cancelled,
                redeliveries,
                score,
                lease_expiry,
            } => (cancelled, redeliveries, score, lease_expiry),
            ClaimOutcome::NotPending => {
                lost += 1;
                continue;
            }
            ClaimOutcome::DuplicateDropped => {
                metrics::pending_duplicates_dropped(queue, 1);
                shared
                    .stats
                    .pending_duplicates_dropped
                    .fetch_add(1, Ordering::Relaxed);
                continue;
            }
            ClaimOutcome::DeadLettered => {
                tracing::warn!(%queue, request = %candidate.generation, "request cannot be served here; the store moved it to the dead set with the reason");
                metrics::dead_lettered(queue, "unservable", 1);
                shared.stats.dead_lettered.fetch_add(1, Ordering::Relaxed);
                continue;
            }
        };
        let flight = shared
            .held
            .insert(queue, candidate.generation.clone(), lease_expiry);
        shared.stats.claimed.fetch_add(1, Ordering::Relaxed);
        let parsed = match candidate.plan {
            Plan::Dispatch(parsed) => parsed,
            Plan::Invalid(why) => {
                let list = result_list(shared, spec, None);
                let record =
                    ResultRecord::error(&candidate.generation.id, ErrorCode::InvalidRequest, why);
                shared
                    .hand_to_writer(terminal(
                        queue,
                        candidate.generation,
                        (candidate.entry.member, score),
                        list,
                        record,
                        ErrorCode::InvalidRequest.as_str(),
                    ))
                    .await;
                continue;
            }
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
            shared
                .hand_to_writer(terminal(
                    queue,
                    candidate.generation,
                    (candidate.entry.member, score),
                    list,
                    record,
                    code.as_str(),
                ))
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
            score,
            parsed: *parsed,
            deadline,
            redeliveries,
        };
        dispatched += 1;
        shared.spawn_until(
            &shared.tasks,
            &shared.abandon,
            execute(shared.clone(), queue.clone(), request, list, flight, permit),
        );
    }
    metrics::requests(queue, dispatched);
    if !hand_off_cancelled.is_empty() {
        release(shared, queue, &hand_off_cancelled).await;
    }
    lost
}

async fn dead_letter(shared: &Shared, queue: &Arc<str>, entry: &PendingEntry, error: &MemberError) {
    let reason = error.to_string();
    tracing::warn!(queue = %queue, bytes = entry.member.len(), %reason, "unparsable member moved to the dead set");
    if park_dead(shared, queue, entry, &reason).await {
        metrics::dead_lettered(queue, "unparsable", 1);
    }
}

/// Moves a pending member to the dead set with `reason`; true when it moved.
async fn park_dead(shared: &Shared, queue: &Arc<str>, entry: &PendingEntry, reason: &str) -> bool {
    match shared.store.dead_letter(queue, &entry.member, reason).await {
        Ok(moved) => {
            if moved {
                shared.stats.dead_lettered.fetch_add(1, Ordering::Relaxed);
            }
            moved
        }
        Err(e) => {
            shared.note_store_error(&e);
            tracing::warn!(error = %e, "dead_letter failed; the member stays pending");
            false
        }
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
