//! The `aimd` gate's unit tests (tokio paused time): window growth, the once-per-flight decrease, `Retry-After`, holds, headroom, queue time, the band ladder, budget and wakes.

use super::*;
use crate::gate::contract::GatewayAnswer;
use crate::gate::{GateEnv, Releases};
use crate::gate::{factory, scripted};
use serde_json::json;
use std::time::Duration;
use tokio::time::{advance, timeout};

#[path = "tests/ladder.rs"]
mod ladder;

/// Labels of a request: `classification` (`reserved`, `overflow` or none) and `tier`.
fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    (pairs.iter())
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// No classification, no tier: the `overflow/batch` band.
fn batch() -> BTreeMap<String, String> {
    BTreeMap::new()
}

fn reserved_interactive() -> BTreeMap<String, String> {
    labels(&[("classification", "reserved"), ("tier", "interactive")])
}

/// An `aimd` gate of pool `p` with these params.
fn gate(params: serde_json::Value) -> AimdGate {
    let given = scripted::params(params);
    let params = crate::gate::params::Params::new("aimd", &given);
    AimdGate::from_params(params, &GateOwner::pool("p")).expect("valid params")
}

/// The verdict for a request with `labels`, and what it reserved.
async fn admit(gate: &dyn DispatchGate, labels: &BTreeMap<String, String>) -> (Verdict, Releases) {
    let metadata = BTreeMap::new();
    let mut labels = labels.clone();
    let mut request = GateRequest {
        id: "r",
        metadata: &metadata,
        labels: &mut labels,
    };
    let mut releases = Releases::new();
    let verdict = gate.apply(&mut request, &mut releases).await.unwrap();
    (verdict, releases)
}

/// An answer `status` to a call sent at `sent_at`.
fn answer(sent_at: Instant, status: u16) -> GatewayOutcome {
    GatewayOutcome {
        sent_at,
        answer: GatewayAnswer::Status(status),
        retry_after: None,
        dropped_reason: None,
        queue_duration: None,
        band_headroom: None,
    }
}

fn accepted(sent_at: Instant) -> GatewayOutcome {
    answer(sent_at, 200)
}

/// A 429 `rejected-saturated`.
fn saturated(sent_at: Instant) -> GatewayOutcome {
    GatewayOutcome {
        dropped_reason: Some("rejected-saturated".to_owned()),
        ..answer(sent_at, 429)
    }
}

/// The window of `band`, which must exist.
fn window(gate: &AimdGate, band: &str) -> f64 {
    gate.band(band).expect("the band was seen").window
}

fn state(gate: &AimdGate, band: &str) -> (f64, f64, usize) {
    let s = gate.band(band).expect("the band was seen");
    (s.window, s.ssthresh, s.inflight)
}

/// Creates the band of `labels` (one request through and released).
async fn touch(gate: &AimdGate, labels: &BTreeMap<String, String>) {
    let (_, releases) = admit(gate, labels).await;
    releases.run().await;
}

/// `n` accepts for `labels`, sent now.
fn accept_n(gate: &AimdGate, labels: &BTreeMap<String, String>, n: usize) {
    for _ in 0..n {
        gate.observe(labels, &accepted(Instant::now()));
    }
}

/// The `overflow/batch` window once `outcome` of a batch request is observed.
fn batch_window_after(gate: &AimdGate, outcome: &GatewayOutcome) -> f64 {
    gate.observe(&batch(), outcome);
    window(gate, "overflow/batch")
}

/// The `overflow/batch` window after `n` more batch accepts, sent now.
fn batch_window_after_accepts(gate: &AimdGate, n: usize) -> f64 {
    accept_n(gate, &batch(), n);
    window(gate, "overflow/batch")
}

fn assert_near(actual: f64, expected: f64) {
    assert!(
        (actual - expected).abs() < 1e-9,
        "{actual} is not {expected}"
    );
}

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn a_new_band_starts_at_the_floor_and_slow_start_adds_the_increase_per_accept_up_to_the_cap()
{
    let gate = gate(json!({"max_window": "4"}));
    touch(&gate, &batch()).await;
    assert_eq!(state(&gate, "overflow/batch"), (1.0, 4.0, 0));
    assert_near(batch_window_after_accepts(&gate, 2), 3.0);
    assert_near(batch_window_after_accepts(&gate, 5), 4.0);
}

#[tokio::test(start_paused = true)]
async fn above_the_threshold_congestion_avoidance_adds_the_increase_over_the_window() {
    let gate = gate(json!({"max_window": 64, "increase": "1"}));
    touch(&gate, &batch()).await;
    accept_n(&gate, &batch(), 3);
    advance(MS).await;
    gate.observe(&batch(), &saturated(Instant::now()));
    assert_eq!(state(&gate, "overflow/batch"), (2.0, 2.0, 0));
    // Sent at the decrease itself: from before the recovery point, no growth.
    assert_near(batch_window_after(&gate, &accepted(Instant::now())), 2.0);
    advance(MS).await;
    assert_near(batch_window_after_accepts(&gate, 1), 2.5);
    assert_near(batch_window_after_accepts(&gate, 1), 2.5 + 1.0 / 2.5);
}

#[tokio::test(start_paused = true)]
async fn a_flight_of_refusals_sent_before_the_decrease_decreases_the_window_once() {
    let gate = gate(json!({}));
    touch(&gate, &batch()).await;
    accept_n(&gate, &batch(), 7);
    let flight = Instant::now();
    advance(MS).await;
    for _ in 0..3 {
        gate.observe(&batch(), &saturated(flight));
    }
    assert_eq!(state(&gate, "overflow/batch"), (4.0, 4.0, 0));
    advance(MS).await;
    gate.observe(&batch(), &saturated(Instant::now()));
    assert_eq!(state(&gate, "overflow/batch"), (2.0, 2.0, 0));
    for _ in 0..5 {
        advance(MS).await;
        gate.observe(&batch(), &saturated(Instant::now()));
    }
    assert_eq!(
        window(&gate, "overflow/batch"),
        1.0,
        "never under the floor"
    );
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_closes_the_band_and_the_bands_below_until_it_passes_then_reopens_at_the_floor()
 {
    let gate = gate(json!({}));
    let reserved_batch = labels(&[("classification", "reserved")]);
    touch(&gate, &batch()).await;
    touch(&gate, &reserved_batch).await;
    accept_n(&gate, &reserved_batch, 3);
    advance(MS).await;
    let refusal = GatewayOutcome {
        retry_after: Some(Duration::from_secs(2)),
        ..saturated(Instant::now())
    };
    gate.observe(&reserved_batch, &refusal);
    assert_eq!(admit(&gate, &reserved_batch).await.0, Verdict::Wait);
    assert_eq!(admit(&gate, &batch()).await.0, Verdict::Refuse, "inherited");
    assert_eq!(gate.budget().await, 0.0);
    advance(Duration::from_millis(1999)).await;
    assert_eq!(admit(&gate, &reserved_batch).await.0, Verdict::Wait);
    advance(MS).await;
    let (verdict, _held) = admit(&gate, &reserved_batch).await;
    assert_eq!(verdict, Verdict::Continue);
    assert_eq!(state(&gate, "reserved/batch"), (1.0, 2.0, 1));
    assert_eq!(admit(&gate, &reserved_batch).await.0, Verdict::Wait, "full");
    assert_eq!(admit(&gate, &batch()).await.0, Verdict::Continue);
}

#[tokio::test(start_paused = true)]
async fn a_full_band_makes_reserved_requests_wait_and_refuses_the_rest() {
    let gate = gate(json!({}));
    let (verdict, first) = admit(&gate, &reserved_interactive()).await;
    assert_eq!(verdict, Verdict::Continue);
    assert_eq!(admit(&gate, &reserved_interactive()).await.0, Verdict::Wait);
    let (verdict, second) = admit(&gate, &batch()).await;
    assert_eq!(
        verdict,
        Verdict::Continue,
        "another band has its own window"
    );
    assert_eq!(admit(&gate, &batch()).await.0, Verdict::Refuse);
    assert_eq!(state(&gate, "overflow/batch"), (1.0, 256.0, 1));
    first.run().await;
    second.run().await;
    assert_eq!(state(&gate, "overflow/batch").2, 0, "released");
    assert_eq!(state(&gate, "reserved/interactive").2, 0, "released");
}

#[tokio::test(start_paused = true)]
async fn the_advertised_headroom_caps_the_window_at_inflight_plus_headroom_never_under_the_floor() {
    let gate = gate(json!({"max_window": 64}));
    touch(&gate, &batch()).await;
    accept_n(&gate, &batch(), 7);
    let (_, held) = admit(&gate, &batch()).await;
    let (_, held_too) = admit(&gate, &batch()).await;
    let advice = GatewayOutcome {
        band_headroom: Some(3.0),
        ..answer(Instant::now(), 500)
    };
    gate.observe(&batch(), &advice);
    assert_eq!(state(&gate, "overflow/batch"), (5.0, 5.0, 2));
    held.run().await;
    held_too.run().await;
    let none_left = GatewayOutcome {
        band_headroom: Some(0.0),
        ..answer(Instant::now(), 500)
    };
    gate.observe(&batch(), &none_left);
    assert_eq!(state(&gate, "overflow/batch"), (1.0, 1.0, 0));
}

#[tokio::test(start_paused = true)]
async fn queue_time_past_the_target_holds_the_window_and_past_twice_it_shrinks_it_gently() {
    let gate = gate(json!({"queue_duration_target": "100ms"}));
    touch(&gate, &batch()).await;
    accept_n(&gate, &batch(), 3);
    let queued = |ms| GatewayOutcome {
        queue_duration: Some(Duration::from_millis(ms)),
        ..accepted(Instant::now())
    };
    assert_near(batch_window_after(&gate, &queued(150)), 4.0);
    assert_near(batch_window_after(&gate, &queued(250)), 3.6);
    advance(MS).await;
    assert_near(batch_window_after(&gate, &queued(50)), 3.6 + 1.0 / 3.6);
}

#[tokio::test(start_paused = true)]
async fn evictions_other_refusals_and_errors_leave_the_window_alone() {
    let gate = gate(json!({}));
    touch(&gate, &batch()).await;
    accept_n(&gate, &batch(), 3);
    let reasoned = |status, reason: &str| GatewayOutcome {
        dropped_reason: Some(reason.to_owned()),
        ..answer(Instant::now(), status)
    };
    advance(MS).await;
    gate.observe(&batch(), &reasoned(429, "evicted-priority"));
    gate.observe(&batch(), &reasoned(503, "rejected-shutting-down"));
    gate.observe(&batch(), &answer(Instant::now(), 500));
    gate.observe(&batch(), &GatewayOutcome::failed(Instant::now()));
    assert_eq!(state(&gate, "overflow/batch"), (4.0, 256.0, 0));
}

#[tokio::test(start_paused = true)]
async fn the_budget_is_one_before_any_band_then_the_widest_open_fraction_and_zero_when_all_are_shut()
 {
    let gate = gate(json!({}));
    assert_eq!(gate.budget().await, 1.0);
    let (_, held) = admit(&gate, &batch()).await;
    assert_eq!(gate.budget().await, 0.0, "its only band is full");
    held.run().await;
    accept_n(&gate, &batch(), 3);
    let (_, held) = admit(&gate, &batch()).await;
    assert_eq!(gate.budget().await, 0.75);
    touch(&gate, &reserved_interactive()).await;
    assert_eq!(gate.budget().await, 1.0, "an idle band is wide open");
    drop(held);
}

#[tokio::test(start_paused = true)]
async fn a_release_and_an_outcome_each_wake_one_parked_request() {
    let gate = gate(json!({}));
    let (_, held) = admit(&gate, &reserved_interactive()).await;
    assert_eq!(admit(&gate, &reserved_interactive()).await.0, Verdict::Wait);
    let parked = tokio::spawn({
        let gate = gate.clone();
        async move { gate.woken().await }
    });
    held.run().await;
    let woke = timeout(Duration::from_secs(1), parked).await;
    assert!(woke.is_ok(), "the release woke the parked request");
    gate.observe(&batch(), &accepted(Instant::now()));
    let woke = timeout(Duration::from_secs(1), gate.woken()).await;
    assert!(woke.is_ok(), "the outcome woke the next waiter");
}

#[tokio::test(start_paused = true)]
async fn the_factory_builds_it_and_the_wrapping_gates_pass_outcomes_and_wakes_to_it() {
    let aimd = json!({"gate_type": "aimd", "gate_params": {"max_window": "8"}});
    let configs = [
        ("aimd", json!({})),
        (
            "composite",
            json!({"gates": [{"gate_type": "constant"}, aimd.clone()]}),
        ),
        ("wait-on-refuse", json!({"gate": aimd.clone()})),
        (
            "tier-priority-admission",
            json!({"saturation_gate": "aimd", "saturation_gate_params": {"max_window": "8"}}),
        ),
    ];
    for (gate_type, params) in configs {
        let params = scripted::params(params);
        let owner = GateOwner::pool("p");
        let built = factory::build(gate_type, &params, &owner, &GateEnv::default());
        let gate = built.unwrap().expect("a gate");
        let (verdict, held) = admit(gate.as_ref(), &batch()).await;
        assert_eq!(verdict, Verdict::Continue, "{gate_type}");
        assert_eq!(gate.budget().await, 0.0, "{gate_type}: one in flight of 1");
        gate.observe(&batch(), &accepted(Instant::now()));
        assert_eq!(
            gate.budget().await,
            0.5,
            "{gate_type}: the window grew to 2"
        );
        let woke = timeout(Duration::from_secs(1), gate.woken()).await;
        assert!(woke.is_ok(), "{gate_type}: the outcome's wake came through");
        held.run().await;
    }
}

#[cfg(feature = "serve")]
#[test]
fn the_gauges_show_each_bands_window_threshold_and_inflight_by_pool_and_band() {
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let page = metrics::with_local_recorder(&recorder, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let gate = gate(json!({"max_window": 16}));
            let (_, held) = admit(&gate, &reserved_interactive()).await;
            gate.observe(&reserved_interactive(), &accepted(Instant::now()));
            let page = handle.render();
            held.run().await;
            page
        })
    });
    let labels = r#"{pool_name="p",band="reserved/interactive"}"#;
    for (name, value) in [
        (AIMD_WINDOW, "2"),
        (AIMD_SSTHRESH, "16"),
        (AIMD_INFLIGHT, "1"),
    ] {
        assert!(page.contains(&format!("{name}{labels} {value}")), "{page}");
    }
}

#[cfg(feature = "serve")]
use crate::metrics::{AIMD_INFLIGHT, AIMD_SSTHRESH, AIMD_WINDOW};
