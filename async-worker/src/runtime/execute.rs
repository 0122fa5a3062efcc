//! One claimed request's life in a worker: the handler call, bounded by deadline and timeout, and its outcome.

use super::Shared;
use super::held::{Flight, StopReason};
use super::pool_gate::{self, Passage};
use super::pools::Pool;
use super::routing::Destination;
use super::settlement::{Claimed, Settlement, terminal};
use crate::gate::Releases;
use crate::handler::{HandlerOutcome, Request};
use crate::metrics::{self, QueueHandle};
use claim_core::store::ParkItem;
use claim_core::wire::{self, ErrorCode, ResultRecord};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::OwnedSemaphorePermit;

/// One dispatched request and what its run needs.
pub struct Work {
    pub shared: Arc<Shared>,
    pub queue: Arc<str>,
    pub request: Request,
    pub destination: Destination,
    pub flight: Arc<Flight>,
    pub pool: Arc<Pool>,
    /// Held until the outcome is handed over, so `concurrency` bounds
    /// handler calls.
    pub permit: OwnedSemaphorePermit,
    /// Counts the request as buffered until a worker starts it.
    pub buffered: metrics::Buffered,
}

/// Handles one request and hands its outcome to the writer; the claim
/// stays held (and heartbeated) until the writer's ack lands.
///
/// One `async move` block over `work`'s fields, not an `async fn` of
/// seven arguments: an async fn keeps its arguments twice (as captured and
/// as locals), and the task of every request in flight reserves room for
/// its largest state (2,488 bytes as an async fn, inside a 5,048-byte task
/// with the wrapper that counted the pick-up, `-Zprint-type-sizes`).
#[expect(
    clippy::manual_async_fn,
    reason = "an async fn would hold `work` twice"
)]
pub fn execute(mut work: Work) -> impl Future<Output = ()> + Send {
    async move {
        let queue_metrics = work.buffered.picked_up();
        let shared = &work.shared;
        let releases = if let Some(gate) = &work.pool.gate {
            // Boxed: a gate's wait is a large state every queued request would
            // otherwise carry, and most pools have no gate.
            let passage = pool_gate::pass(
                shared,
                &work.pool.name,
                gate.as_ref(),
                &work.queue,
                &mut work.request,
                &work.destination,
                &work.flight,
            );
            match Box::pin(passage).await {
                Passage::Through(releases) => releases,
                Passage::Settled(settlement) => return shared.hand_to_writer(settlement).await,
                Passage::Stopped => return,
            }
        } else {
            Releases::new()
        };
        run_handler(
            shared,
            &queue_metrics,
            &work.queue,
            &work.request,
            work.destination,
            &work.flight,
        )
        .await;
        // What the pool gate reserved lasts as long as the request was in the
        // handler, as Go's worker holds it.
        releases.run().await;
        drop(work.permit);
    }
}

/// The handler call, bounded by the deadline and the request timeout, and
/// its outcome handed to the writer.
async fn run_handler(
    shared: &Arc<Shared>,
    queue_metrics: &QueueHandle,
    queue: &Arc<str>,
    request: &Request,
    destination: Destination,
    flight: &Flight,
) {
    let _in_flight = InFlight::start(queue_metrics);
    let now = shared.clock.now();
    let until_deadline = Duration::from_millis(now.until(request.deadline));
    let budget = shared.config.request_timeout.min(until_deadline);
    let started = Instant::now();
    // Cancellation is polled first: once the runtime stopped wanting the
    // answer, whatever the handler returns (often an error caused by the
    // cancellation itself) must not become the terminal record.
    let handled = tokio::select! {
        biased;
        () = flight.cancel.cancelled() => None,
        outcome = shared.handler.handle(request, flight.cancel.clone()) => Some(outcome),
        () = tokio::time::sleep(budget) => Some(timed_out(shared, request)),
    };
    queue_metrics.inference_latency(started.elapsed());
    let outcome = match (handled, flight.reason()) {
        (_, Some(StopReason::Cancelled)) => HandlerOutcome::cancelled(),
        (Some(outcome), _) => outcome,
        // Lease lost: the new owner answers. Shutdown: the sweep returns it.
        (None, _) => return,
    };
    let settlement = settlement_of(shared, queue, request, destination, outcome);
    flight.mark_handed_over();
    // The writer outlives every worker; a closed channel means the process
    // is going down hard, and the claim lapses to be redelivered. Past
    // shutdown's bound the send is abandoned and the sweep returns the claim.
    shared.send_to_writer(settlement).await;
}

/// Counts the request on its queue's in-flight gauge until `execute` ends, however it ends.
struct InFlight(QueueHandle);

impl InFlight {
    fn start(metrics: &QueueHandle) -> Self {
        metrics.in_flight(1.0);
        InFlight(metrics.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight(-1.0);
    }
}

fn timed_out(shared: &Shared, request: &Request) -> HandlerOutcome {
    if shared.clock.now() >= request.deadline {
        HandlerOutcome::error(
            ErrorCode::DeadlineExceeded,
            "deadline passed while the request was being handled",
        )
    } else {
        let limit = shared.config.request_timeout;
        HandlerOutcome::error(
            ErrorCode::InferenceError,
            format!("request timed out after {limit:?}"),
        )
    }
}

/// Turns a handler outcome into the settlement the writer carries out: a terminal record,
/// or a retry parked until it is due (a retry that cannot be due before the
/// deadline becomes `DEADLINE_EXCEEDED`).
pub fn settlement_of(
    shared: &Shared,
    queue: &Arc<str>,
    request: &Request,
    destination: Destination,
    outcome: HandlerOutcome,
) -> Settlement {
    let id = request.generation.id.as_str();
    let (record, code) = match outcome {
        HandlerOutcome::Success { status, body } => (ResultRecord::success(id, status, body), "OK"),
        HandlerOutcome::Error {
            code,
            message,
            status,
        } => {
            let mut record = ResultRecord::error(id, code, message);
            record.status_code = status;
            (record, code.as_str())
        }
        HandlerOutcome::Retry { after, reason } => {
            let due = shared.clock.now().plus(after.as_millis() as u64);
            if due >= request.deadline {
                let message =
                    format!("retry after {after:?} would pass the deadline; last error: {reason}");
                (
                    ResultRecord::error(id, ErrorCode::DeadlineExceeded, message),
                    ErrorCode::DeadlineExceeded.as_str(),
                )
            } else {
                match wire::stamp_retry(request.member.as_bytes(), &request.queue_name) {
                    Ok(stamped) => {
                        tracing::debug!(request = %request.generation, ?after, %reason, "parking for retry");
                        let item = ParkItem {
                            generation: request.generation.clone(),
                            member: stamped.into(),
                            due,
                        };
                        return Settlement::Park {
                            queue: queue.clone(),
                            item,
                        };
                    }
                    Err(e) => (
                        ResultRecord::error(id, ErrorCode::InvalidRequest, e.to_string()),
                        ErrorCode::InvalidRequest.as_str(),
                    ),
                }
            }
        }
    };
    terminal(queue, Claimed::of(request), destination, record, code)
}

#[cfg(test)]
mod tests {
    use super::{Work, execute};

    /// The bytes a future returned by `make` holds, without making one.
    fn state_size<F>(_make: fn(Work) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    /// Every request in flight holds this state in its task for as long as
    /// it runs: 2,488 bytes as a seven-argument async fn (1,224 as one
    /// block over `Work`), 5,000 in flight cost the difference 6 MiB of
    /// RSS. The bench's hold phase measures the whole task.
    #[test]
    fn a_dispatched_requests_task_state_stays_under_one_and_a_half_kib() {
        let size = state_size(execute);
        assert!(
            size <= 1536,
            "execute's state grew to {size} bytes: box what a rare path awaits \
             (a gate's passage, a full channel's send) instead of holding it inline"
        );
    }
}
