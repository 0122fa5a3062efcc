//! Handing one claim call's claimed members on: to a worker, or straight to the writer when they need no handler.
//!
//! A member whose deadline passed, that the producer cancelled, or that is
//! invalid gets its terminal record here without a handler call; the rest
//! go to a worker while permits last, and those left over at shutdown go
//! back to pending. Payloads stored apart are fetched only for the members
//! about to go to a worker (see `payloads`).

use super::candidate::{Candidate, Plan, lenient_payload_ref};
use super::consumer::Consumer;
use super::consumer::release;
use super::execute::{Work, execute};
use super::held::Flight;
use super::poll::Poll;
use super::routing::{self, Destination};
use super::settlement::{Claimed, error, gate_dropped, terminal};
use crate::handler::Request;
use crate::metrics;
use claim_core::Millis;
use claim_core::routing::MemberRoute;
use claim_core::store::ClaimOutcome;
use claim_core::wire::ErrorCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::OwnedSemaphorePermit;
use tracing::Instrument;

/// A claimed member with a worker permit, about to go to a worker once its
/// payload (when stored apart) is attached.
pub(super) struct Ready {
    pub request: Request,
    pub destination: Destination,
    pub flight: Arc<Flight>,
    pub permit: OwnedSemaphorePermit,
}

impl Consumer {
    /// Hands one claim call's answered claims to workers (or straight to the
    /// writer when they need no handler), fetching the payloads stored apart
    /// of those going to a worker in one store call; `poll` counts the lost.
    pub(super) async fn dispatch(
        &self,
        candidates: Vec<Candidate>,
        outcomes: Vec<ClaimOutcome>,
        poll: &mut Poll,
    ) {
        poll.answered = true;
        let (shared, queue) = (&self.shared, &self.queue);
        let now = shared.clock.now();
        let mut hand_off_cancelled = Vec::new();
        let mut ready = Vec::new();
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
                    poll.lost += 1;
                    continue;
                }
                ClaimOutcome::DuplicateDropped => {
                    let dropped = metrics::QueueCount::PendingDuplicatesDropped;
                    shared.stats.tally(queue, dropped, 1);
                    continue;
                }
                ClaimOutcome::DeadLettered => {
                    tracing::warn!(%queue, request = %candidate.generation, "request cannot be served here; the store moved it to the dead set with the reason");
                    metrics::dead_lettered(queue, "unservable", 1);
                    shared.stats.dead_lettered.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            };
            let (generation, created) = (candidate.generation.clone(), candidate.created());
            let flight = shared.held.insert(queue, generation, lease_expiry, created);
            flight.hold_releases(candidate.releases);
            shared.stats.claimed.fetch_add(1, Ordering::Relaxed);
            let parsed = match candidate.plan {
                Plan::Dispatch(parsed) => parsed,
                Plan::Dropped(parsed, record) => {
                    let destination = self.destination(MemberRoute::of(&parsed));
                    let record = gate_dropped(&candidate.generation.id, record);
                    let claimed = Claimed {
                        generation: candidate.generation,
                        member: candidate.entry.member,
                        score,
                        payload_ref: parsed.payload_ref,
                    };
                    let code = ErrorCode::GateDropped.as_str();
                    let settlement = terminal(queue, claimed, destination, record, code);
                    shared.hand_to_writer(settlement).await;
                    continue;
                }
                Plan::Invalid(why) => {
                    // Unreadable, so a first attempt as far as anyone can tell.
                    first_attempts += 1;
                    let destination = self.destination(MemberRoute::default());
                    let payload_ref =
                        lenient_payload_ref(&candidate.generation, &candidate.entry.member);
                    let claimed = Claimed {
                        generation: candidate.generation,
                        member: candidate.entry.member,
                        score,
                        payload_ref,
                    };
                    let code = ErrorCode::InvalidRequest;
                    self.record_without_handler(claimed, destination, code, why)
                        .await;
                    continue;
                }
            };
            let first_attempt = parsed.retry_count == 0;
            first_attempts += usize::from(first_attempt);
            let deadline = Millis((parsed.deadline.max(0) as u64).saturating_mul(1000));
            let destination = self.destination(MemberRoute::of(&parsed));
            let early_exit = if deadline <= now {
                Some((
                    ErrorCode::DeadlineExceeded,
                    "deadline passed before the request was dispatched",
                ))
            } else if cancelled {
                Some((ErrorCode::Cancelled, crate::handler::CANCELLED_MESSAGE))
            } else {
                None
            };
            if let Some((code, message)) = early_exit {
                let claimed = Claimed {
                    generation: candidate.generation,
                    member: candidate.entry.member,
                    score,
                    payload_ref: parsed.payload_ref.clone(),
                };
                self.record_without_handler(claimed, destination, code, message)
                    .await;
                continue;
            }
            let permit = match (
                self.stop.is_cancelled(),
                self.pool.permits.clone().try_acquire_owned(),
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
            ready.push(Ready {
                request,
                destination,
                flight,
                permit,
            });
        }
        if !hand_off_cancelled.is_empty() {
            release(shared, queue, &hand_off_cancelled).await;
        }
        // First attempts a failed fetch releases never reached a worker.
        let waiting_first = ready
            .iter()
            .filter(|r| r.request.parsed.payload_ref.is_some() && r.request.parsed.retry_count == 0)
            .count();
        let (ready, fetch_failed) = self.attach_payloads(ready).await;
        if fetch_failed {
            first_attempts -= waiting_first;
            // Its members went back to pending: pause before peeking them again.
            poll.failed = true;
        }
        metrics::count(queue, metrics::QueueCount::Requests, first_attempts);
        metrics::count(queue, metrics::QueueCount::Dispatched, ready.len());
        for Ready {
            request,
            destination,
            flight,
            permit,
        } in ready
        {
            let buffered = metrics::handed_off(queue);
            // Every line logged while the request runs names it; never its
            // payload. At debug level: a live span costs 1.5-5 µs of worker
            // CPU and ~500 B per request in flight (`cargo xtask bench
            // --log-filter`), and the info-level lines about one request
            // name it themselves (`request=`). `LOG_LEVEL=debug`, or
            // `RUST_LOG=info,async_worker::request=debug`, turns it on.
            let span = tracing::debug_span!(
                target: "async_worker::request",
                "request",
                queue = %queue,
                id = %request.generation.id,
                generation = %request.generation.token,
            );
            // With an OpenTelemetry layer, the span continues the
            // producer's trace (its `traceparent` in `data.metadata`).
            #[cfg(feature = "otel")]
            crate::otel::continue_trace(&span, &request);
            let run = execute(Work {
                shared: shared.clone(),
                queue: queue.clone(),
                request,
                destination,
                flight,
                pool: self.pool.clone(),
                permit,
                buffered,
            });
            shared.spawn_until(&shared.tasks, &shared.abandon, run.instrument(span));
        }
    }

    /// Hands the writer a terminal error record for a claim that needs no
    /// handler call (invalid, past its deadline, cancelled, payload missing).
    pub(super) async fn record_without_handler(
        &self,
        claimed: Claimed,
        destination: Destination,
        code: ErrorCode,
        message: impl Into<String>,
    ) {
        let settlement = error(&self.queue, claimed, destination, code, message);
        self.shared.hand_to_writer(settlement).await;
    }

    /// Where a member polled here records its result (Go's routing, see
    /// `routing`): by the store's config, which the builder copied into the
    /// spec, so the store's own records land beside this runtime's.
    fn destination(&self, member: MemberRoute<'_>) -> Destination {
        let default_list = &self.shared.store.config().default_result_list;
        routing::at_poll(member, &self.spec, default_list)
    }
}
