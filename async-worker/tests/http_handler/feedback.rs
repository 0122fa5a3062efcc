//! The handler's feedback: each gateway call is reported once, with its send time, status and the gateway's advice headers, and an `aimd` gate told of a saturated 429 closes its band.

use super::support::*;
use async_worker::DispatchGate;
use async_worker::gate::aimd::AimdGate;
use async_worker::gate::{GateOwner, GatewayAnswer, GatewayOutcome, OutcomeKind};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The outcomes reported, with the labels of the request each was for.
type Reports = Arc<Mutex<Vec<(GatewayOutcome, String)>>>;

/// A handler on a fresh stand-in gateway that notes each report and tells `gate`.
async fn reporting_to(gate: Arc<AimdGate>) -> (HttpHandler, Reports) {
    let (addr, _log) = gateway().await;
    let reports = Reports::default();
    let noted = reports.clone();
    let handler = handler(addr, None).with_feedback(Arc::new(move |request, outcome| {
        let tier = request
            .parsed
            .labels
            .get("tier")
            .cloned()
            .unwrap_or_default();
        noted.lock().unwrap().push((outcome.clone(), tier));
        gate.observe(&request.parsed.labels, outcome);
    }));
    (handler, reports)
}

/// An interactive request to `endpoint`.
fn interactive(endpoint: &str) -> Request {
    let mut r = simple(endpoint);
    r.parsed.labels.insert("tier".into(), "interactive".into());
    r
}

#[tokio::test]
async fn a_saturated_429_reaches_the_gates_observe_and_closes_its_band_for_the_retry_after() {
    let gate = Arc::new(AimdGate::new(Default::default(), &GateOwner::pool("p")));
    let (handler, reports) = reporting_to(gate.clone()).await;
    let before = tokio::time::Instant::now();
    let outcome = handle(&handler, &interactive("/saturated")).await;
    assert!(
        matches!(outcome, HandlerOutcome::Retry { .. }),
        "{outcome:?}"
    );
    let reports = reports.lock().unwrap().clone();
    assert_eq!(reports.len(), 1, "one report per call");
    let (reported, tier) = &reports[0];
    assert_eq!(tier, "interactive", "the request's labels come along");
    assert_eq!(reported.answer, GatewayAnswer::Status(429));
    assert_eq!(
        reported.dropped_reason.as_deref(),
        Some("rejected-saturated")
    );
    assert_eq!(reported.retry_after, Some(Duration::from_secs(5)));
    assert_eq!(reported.kind(), OutcomeKind::Capacity);
    assert!(reported.sent_at >= before, "stamped when the call started");
    let band = gate
        .band("overflow/interactive")
        .expect("the band was told");
    assert_eq!(band.window, 1.0, "closed, to reopen at the floor");
    assert_eq!(gate.budget().await, 0.0, "closed for the Retry-After");
}

#[tokio::test]
async fn an_accepted_call_reports_the_queue_time_and_headroom_the_gateway_advised() {
    let gate = Arc::new(AimdGate::new(Default::default(), &GateOwner::pool("p")));
    let (handler, reports) = reporting_to(gate.clone()).await;
    let outcome = handle(&handler, &interactive("/advised")).await;
    assert!(
        matches!(outcome, HandlerOutcome::Success { .. }),
        "{outcome:?}"
    );
    let (reported, _) = reports.lock().unwrap()[0].clone();
    assert_eq!(reported.kind(), OutcomeKind::Accepted);
    assert_eq!(reported.queue_duration, Some(Duration::from_millis(125)));
    assert_eq!(reported.band_headroom, Some(3.0));
    assert_eq!(gate.band("overflow/interactive").unwrap().window, 2.0);
}

#[tokio::test]
async fn an_unreachable_gateway_is_reported_as_a_failed_call() {
    let reports = Reports::default();
    let noted = reports.clone();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let handler = handler(addr, None).with_feedback(Arc::new(move |_, outcome| {
        noted.lock().unwrap().push((outcome.clone(), String::new()));
    }));
    let outcome = handle(&handler, &interactive("/v1/completions")).await;
    assert!(
        matches!(outcome, HandlerOutcome::Retry { .. }),
        "{outcome:?}"
    );
    let reports = reports.lock().unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].0.answer, GatewayAnswer::Failed);
    assert_eq!(reports[0].0.kind(), OutcomeKind::Error);
}
