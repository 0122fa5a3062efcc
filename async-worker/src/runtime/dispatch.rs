//! Handing one claim call's claimed members on: to a worker, or straight to the writer when they need no handler.
//!
//! A member whose deadline passed, that the producer cancelled, or that is
//! invalid gets its terminal record here without a handler call; the rest
//! go to a worker while permits last, and those left over at shutdown go
//! back to pending.

use super::consumer::Consumer;
use super::execute::{execute, terminal};
use super::release::release;
use crate::handler::Request;
use crate::metrics;
use claim_core::store::{ClaimOutcome, PendingEntry};
use claim_core::wire::{ErrorCode, ParsedMember, ResultRecord};
use claim_core::{Generation, Member, Millis, Score};
use std::sync::atomic::Ordering;

/// What the consumer decided about one peeked member before claiming it.
pub(super) enum Plan {
    Dispatch(Box<ParsedMember>),
    /// Parsable as far as its id, but invalid: claim it and record why.
    Invalid(String),
}

pub(super) struct Candidate {
    pub entry: PendingEntry,
    pub generation: Generation,
    pub plan: Plan,
}

impl Consumer {
    /// Hands one claim call's claims to workers (or straight to the writer when
    /// they need no handler). Returns how many members another replica took first.
    pub(super) async fn dispatch(
        &self,
        candidates: Vec<Candidate>,
        outcomes: Vec<ClaimOutcome>,
    ) -> usize {
        let (shared, queue) = (&self.shared, &self.queue);
        let now = shared.clock.now();
        let mut lost = 0;
        let mut hand_off_cancelled = Vec::new();
        let mut dispatched = 0;
        let mut first_attempts = 0;
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
            let first_attempt = match &candidate.plan {
                Plan::Dispatch(parsed) => {
                    flight.set_created(parsed.created);
                    parsed.retry_count == 0
                }
                Plan::Invalid(_) => true,
            };
            first_attempts += usize::from(first_attempt);
            let parsed = match candidate.plan {
                Plan::Dispatch(parsed) => parsed,
                Plan::Invalid(why) => {
                    let list = self.result_list(None);
                    let claimed = (candidate.entry.member, score);
                    let code = ErrorCode::InvalidRequest;
                    self.record_without_handler(candidate.generation, claimed, list, code, why)
                        .await;
                    continue;
                }
            };
            let deadline = Millis((parsed.deadline.max(0) as u64).saturating_mul(1000));
            let list = self.result_list(parsed.result_queue_name.as_deref());
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
                let claimed = (candidate.entry.member, score);
                self.record_without_handler(candidate.generation, claimed, list, code, message)
                    .await;
                continue;
            }
            let permit = match (
                self.stop.is_cancelled(),
                shared.permits.clone().try_acquire_owned(),
            ) {
                (false, Ok(permit)) => permit,
                _ => {
                    // Back to pending before any worker had it: not an
                    // attempt (Go counts one when a worker picks it up).
                    first_attempts -= usize::from(first_attempt);
                    hand_off_cancelled.push(candidate.generation);
                    continue;
                }
            };
            let request = Request {
                queue_id: self.spec.id.clone(),
                queue_name: self.spec.queue_name.clone(),
                generation: candidate.generation,
                member: candidate.entry.member,
                score,
                parsed: *parsed,
                deadline,
                redeliveries,
            };
            dispatched += 1;
            let buffered = metrics::handed_off(queue);
            let run = execute(shared.clone(), queue.clone(), request, list, flight, permit);
            shared.spawn_until(&shared.tasks, &shared.abandon, async move {
                buffered.picked_up();
                run.await
            });
        }
        metrics::requests(queue, first_attempts);
        metrics::dispatched(queue, dispatched);
        if !hand_off_cancelled.is_empty() {
            release(shared, queue, &hand_off_cancelled).await;
        }
        lost
    }

    /// Hands the writer a terminal error record for a claim that needs no
    /// handler call (invalid, past its deadline, cancelled).
    async fn record_without_handler(
        &self,
        generation: Generation,
        claimed: (Member, Score),
        list: String,
        code: ErrorCode,
        message: impl Into<String>,
    ) {
        let record = ResultRecord::error(&generation.id, code, message);
        let settlement = terminal(
            &self.queue,
            generation,
            claimed,
            list,
            record,
            code.as_str(),
        );
        self.shared.hand_to_writer(settlement).await;
    }

    /// The queue's configured result list, else the member's, else the default.
    fn result_list(&self, member_list: Option<&str>) -> String {
        self.spec
            .result_queue_name
            .as_deref()
            .or(member_list.filter(|l| !l.is_empty()))
            .unwrap_or(&self.shared.config.default_result_list)
            .to_owned()
    }
}
