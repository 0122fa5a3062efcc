//! The pool gate in the worker, after the claim: each verdict's effect, and the bounded wait a `Wait` parks the request in (its claim still renewed).
//!
//! - `Continue`: the handler runs; what the gate reserved is released when
//!   the worker is done with the request.
//! - `Drop`: the gate's record, or `GATE_DROPPED`.
//! - `Refuse`: requeued (Go's retry path with no backoff: parked due now,
//!   `retry_count` kept), so the request goes back to its queue's score.
//! - `Wait`: asked again after a jittered pause (100 ms doubling to 1 s),
//!   or as soon as the gate signals room (`DispatchGate::woken`), until
//!   `--gate-wait-timeout` (then requeued, counted in
//!   `gate_wait_requeues_total`) or the request's deadline (then
//!   `DEADLINE_EXCEEDED`), whichever is first. The worker keeps its slot
//!   and the heartbeat keeps renewing the claim meanwhile.
//! - an error: `GATE_ERROR`, `Pool gating error: <error>`.
//!
//! A gate that blocks inside `apply` is bounded the same way: the call is
//! dropped at the wait's end, and a dropped call leaves nothing reserved.

use super::Shared;
use super::held::{Flight, StopReason};
use super::queue_gate::refusal_reason;
use super::retry::jittered;
use super::routing::Destination;
use super::settlement::{Claimed, Settlement, gate_dropped, terminal};
use crate::gate::{DispatchGate, GateRequest, Releases, Verdict};
use crate::handler::{HandlerOutcome, Request};
use crate::metrics::{self, GateReason};
use claim_core::Millis;
use claim_core::store::ParkItem;
use claim_core::wire::{self, ErrorCode, ResultRecord};
use std::sync::Arc;
use std::time::Duration;

/// The first pause after a `Wait`, and the cap it doubles up to.
const FIRST_PAUSE: Duration = Duration::from_millis(100);
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// How a request came out of its pool's gate.
pub(super) enum Passage {
    /// Run the handler; release these when done.
    Through(Releases),
    /// The gate settled it without a handler call.
    Settled(Settlement),
    /// It ends with this outcome without a handler call: the handler's
    /// check refused it, or the producer cancelled it while it waited.
    Answered(HandlerOutcome),
    /// The runtime stopped wanting the answer (lease lost, shutdown).
    Stopped,
}

/// Where a wait ends: at the gate-wait bound or the request's deadline.
struct WaitEnd {
    at: tokio::time::Instant,
    /// Whether the end is the request's own deadline (not the wait bound).
    is_deadline: bool,
}

/// Puts `request` through `gate`, the gate of pool `pool`.
pub(super) async fn pass(
    shared: &Shared,
    pool: &str,
    gate: &dyn DispatchGate,
    queue: &Arc<str>,
    request: &mut Request,
    destination: &Destination,
    flight: &Flight,
) -> Passage {
    // Checked before the gate (as Go validates transforms), so a request
    // that can never be sent does not take or wait for a gate's slot.
    if let Err((code, message)) = shared.handler.check(request) {
        return Passage::Answered(HandlerOutcome::error(code, message));
    }
    let end = wait_end(shared, request);
    let mut pause = FIRST_PAUSE;
    let mut waited = false;
    loop {
        let mut releases = Releases::new();
        let verdict = tokio::select! {
            biased;
            () = flight.cancel.cancelled() => return stopped(flight),
            verdict = apply(gate, request, &mut releases) => Some(verdict),
            () = tokio::time::sleep_until(end.at) => None,
        };
        let refused = refusal_reason(&request.parsed.labels);
        let settlement = match verdict {
            None => return wait_over(shared, queue, request, destination, &end),
            Some(Ok(Verdict::Continue)) => return Passage::Through(releases),
            Some(Ok(Verdict::Drop(record))) => {
                metrics::pool_gate_decision(pool, GateReason::Dropped);
                let record = gate_dropped(&request.generation.id, record);
                record_of(queue, request, destination, record, ErrorCode::GateDropped)
            }
            Some(Ok(Verdict::Refuse)) => {
                metrics::pool_gate_decision(pool, refused);
                requeue(shared, queue, request, destination)
            }
            Some(Ok(Verdict::Wait)) => {
                drop(releases);
                if !waited {
                    metrics::pool_gate_decision(pool, refused);
                    waited = true;
                }
                let nap = jittered(pause);
                pause = (pause * 2).min(MAX_PAUSE);
                tokio::select! {
                    biased;
                    () = flight.cancel.cancelled() => return stopped(flight),
                    () = tokio::time::sleep(nap) => {}
                    // A gate that knows when room appears (aimd) ends the pause early.
                    () = gate.woken() => {}
                    () = tokio::time::sleep_until(end.at) => {
                        return wait_over(shared, queue, request, destination, &end);
                    }
                }
                continue;
            }
            Some(Err(e)) => {
                metrics::pool_gate_decision(pool, GateReason::Error);
                tracing::warn!(%queue, request = %request.generation, error = %e, "pool gate failed");
                let message = format!("Pool gating error: {e}");
                let record =
                    ResultRecord::error(&request.generation.id, ErrorCode::GateError, message);
                record_of(queue, request, destination, record, ErrorCode::GateError)
            }
        };
        return Passage::Settled(settlement);
    }
}

async fn apply(
    gate: &dyn DispatchGate,
    request: &mut Request,
    releases: &mut Releases,
) -> Result<Verdict, crate::gate::GateError> {
    let parsed = &mut request.parsed;
    let mut gated = GateRequest {
        id: &parsed.id,
        metadata: &parsed.metadata,
        labels: &mut parsed.labels,
    };
    gate.apply(&mut gated, releases).await
}

/// What a wait the runtime cut short comes to: the producer's cancel is
/// answered `CANCELLED`; a lost lease or shutdown leaves the claim to others.
fn stopped(flight: &Flight) -> Passage {
    match flight.reason() {
        Some(StopReason::Cancelled) => Passage::Answered(HandlerOutcome::cancelled()),
        _ => Passage::Stopped,
    }
}

/// The earlier of the gate-wait bound (when set) and the request's deadline.
fn wait_end(shared: &Shared, request: &Request) -> WaitEnd {
    let now = shared.clock.now();
    let to_deadline = Duration::from_millis(now.until(request.deadline));
    let bound = shared.config.gate_wait_timeout;
    let is_deadline = bound.is_zero() || to_deadline <= bound;
    let wait = if is_deadline { to_deadline } else { bound };
    WaitEnd {
        at: tokio::time::Instant::now() + wait,
        is_deadline,
    }
}

/// The wait ran out: `DEADLINE_EXCEEDED` at the deadline, else requeued.
fn wait_over(
    shared: &Shared,
    queue: &Arc<str>,
    request: &Request,
    destination: &Destination,
    end: &WaitEnd,
) -> Passage {
    if end.is_deadline || shared.clock.now() >= request.deadline {
        let message = "deadline passed while the pool gate held the request";
        let record =
            ResultRecord::error(&request.generation.id, ErrorCode::DeadlineExceeded, message);
        let code = ErrorCode::DeadlineExceeded;
        return Passage::Settled(record_of(queue, request, destination, record, code));
    }
    metrics::gate_wait_requeued(queue);
    tracing::debug!(%queue, request = %request.generation, "pool gate wait timed out; requeued");
    Passage::Settled(requeue(shared, queue, request, destination))
}

fn record_of(
    queue: &Arc<str>,
    request: &Request,
    destination: &Destination,
    record: ResultRecord,
    code: ErrorCode,
) -> Settlement {
    let claimed = Claimed {
        generation: request.generation.clone(),
        member: request.member.clone(),
        score: request.score,
        payload_ref: request.parsed.payload_ref.clone(),
    };
    terminal(queue, claimed, destination.clone(), record, code.as_str())
}

/// Back to the retry set, due now, its retry count kept.
fn requeue(
    shared: &Shared,
    queue: &Arc<str>,
    request: &Request,
    destination: &Destination,
) -> Settlement {
    match wire::stamp_requeue(request.member.as_bytes(), &request.queue_name) {
        Ok(stamped) => Settlement::Park {
            queue: queue.clone(),
            item: ParkItem {
                generation: request.generation.clone(),
                member: stamped.into(),
                due: Millis(shared.clock.now().0),
            },
        },
        Err(e) => {
            let record = ResultRecord::error(
                &request.generation.id,
                ErrorCode::InvalidRequest,
                e.to_string(),
            );
            record_of(
                queue,
                request,
                destination,
                record,
                ErrorCode::InvalidRequest,
            )
        }
    }
}
