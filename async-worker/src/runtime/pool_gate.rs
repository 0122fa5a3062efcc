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
use super::settlement::{Claimed, Settlement, error, gate_dropped, terminal};
use crate::gate::{DispatchGate, GateRequest, Releases, Verdict};
use crate::handler::{CANCELLED_MESSAGE, Request};
use crate::metrics::{self, GateReason};
use claim_core::Millis;
use claim_core::store::ParkItem;
use claim_core::wire::{self, ErrorCode};
use std::sync::Arc;
use std::time::Duration;

/// The first pause after a `Wait`, and the cap it doubles up to.
const FIRST_PAUSE: Duration = Duration::from_millis(100);
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// How a request came out of its pool's gate.
pub(super) enum Passage {
    /// Run the handler; release these when done.
    Through(Releases),
    /// It ends without a handler call: the gate settled it, the handler's
    /// check refused it, or the producer cancelled it while it waited.
    Settled(Settlement),
    /// The runtime stopped wanting the answer (lease lost, shutdown).
    Stopped,
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
        return Passage::Settled(answer(queue, request, destination, code, message));
    }
    let (end, at_deadline) = wait_end(shared, request);
    let mut pause = FIRST_PAUSE;
    let mut waited = false;
    loop {
        let mut releases = Releases::new();
        let verdict = tokio::select! {
            biased;
            () = flight.cancel.cancelled() => return stopped(queue, request, destination, flight),
            verdict = apply(gate, request, &mut releases) => Some(verdict),
            () = tokio::time::sleep_until(end) => None,
        };
        let refused = refusal_reason(&request.parsed.labels);
        let settlement = match verdict {
            None => return wait_over(shared, queue, request, destination, at_deadline),
            Some(Ok(Verdict::Continue)) => return Passage::Through(releases),
            Some(Ok(Verdict::Drop(record))) => {
                metrics::pool_gate_decision(pool, GateReason::Dropped);
                let record = gate_dropped(&request.generation.id, record);
                let code = ErrorCode::GateDropped.as_str();
                terminal(
                    queue,
                    Claimed::of(request),
                    destination.clone(),
                    record,
                    code,
                )
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
                    () = flight.cancel.cancelled() => return stopped(queue, request, destination, flight),
                    () = tokio::time::sleep(nap) => {}
                    // A gate that knows when room appears (aimd) ends the pause early.
                    () = gate.woken() => {}
                    () = tokio::time::sleep_until(end) => {
                        return wait_over(shared, queue, request, destination, at_deadline);
                    }
                }
                continue;
            }
            Some(Err(e)) => {
                metrics::pool_gate_decision(pool, GateReason::Error);
                tracing::warn!(%queue, request = %request.generation, error = %e, "pool gate failed");
                let message = format!("Pool gating error: {e}");
                let code = ErrorCode::GateError;
                answer(queue, request, destination, code, message)
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
fn stopped(
    queue: &Arc<str>,
    request: &Request,
    destination: &Destination,
    flight: &Flight,
) -> Passage {
    match flight.reason() {
        Some(StopReason::Cancelled) => {
            let code = ErrorCode::Cancelled;
            Passage::Settled(answer(queue, request, destination, code, CANCELLED_MESSAGE))
        }
        _ => Passage::Stopped,
    }
}

/// Where a wait ends: the earlier of the gate-wait bound (when set) and the
/// request's deadline, and whether that is the deadline.
fn wait_end(shared: &Shared, request: &Request) -> (tokio::time::Instant, bool) {
    let now = shared.clock.now();
    let to_deadline = Duration::from_millis(now.until(request.deadline));
    let bound = shared.config.gate_wait_timeout;
    let is_deadline = bound.is_zero() || to_deadline <= bound;
    let wait = if is_deadline { to_deadline } else { bound };
    (tokio::time::Instant::now() + wait, is_deadline)
}

/// The wait ran out: `DEADLINE_EXCEEDED` at the deadline, else requeued.
fn wait_over(
    shared: &Shared,
    queue: &Arc<str>,
    request: &Request,
    destination: &Destination,
    at_deadline: bool,
) -> Passage {
    if at_deadline || shared.clock.now() >= request.deadline {
        let message = "deadline passed while the pool gate held the request";
        let code = ErrorCode::DeadlineExceeded;
        return Passage::Settled(answer(queue, request, destination, code, message));
    }
    metrics::count(queue, metrics::QueueCount::GateWaitRequeues, 1);
    tracing::debug!(%queue, request = %request.generation, "pool gate wait timed out; requeued");
    Passage::Settled(requeue(shared, queue, request, destination))
}

/// The request's error record, without a handler call.
fn answer(
    queue: &Arc<str>,
    request: &Request,
    destination: &Destination,
    code: ErrorCode,
    message: impl Into<String>,
) -> Settlement {
    let claimed = Claimed::of(request);
    error(queue, claimed, destination.clone(), code, message)
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
            let code = ErrorCode::InvalidRequest;
            answer(queue, request, destination, code, e.to_string())
        }
    }
}
