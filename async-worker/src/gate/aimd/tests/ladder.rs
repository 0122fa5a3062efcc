//! The band ladder: bands ranked as the tier-priority lanes, a refusal decreasing the bands below and holding the ones above, and accepts below clearing holds.

use super::*;

fn overflow_interactive() -> BTreeMap<String, String> {
    labels(&[("tier", "interactive")])
}

/// The bands `reserved/interactive` (rank 0), `overflow/interactive` (3)
/// and `overflow/batch` (5), each grown to a window of 4.
async fn three_bands() -> AimdGate {
    let gate = gate(json!({"hold_duration": "1s"}));
    for labels in [reserved_interactive(), overflow_interactive(), batch()] {
        touch(&gate, &labels).await;
        accept_n(&gate, &labels, 3);
    }
    gate
}

/// The `reserved/interactive` window after one more accept there.
fn reserved_window_after_an_accept(gate: &AimdGate) -> f64 {
    accept_n(gate, &reserved_interactive(), 1);
    windows(gate)[0]
}

fn windows(gate: &AimdGate) -> [f64; 3] {
    [
        "reserved/interactive",
        "overflow/interactive",
        "overflow/batch",
    ]
    .map(|b| window(gate, b))
}

#[tokio::test(start_paused = true)]
async fn bands_are_the_tier_priority_lanes_read_from_classification_and_the_tier_label() {
    let gate = gate(json!({"tier_label": "lane"}));
    let cases = [
        (
            labels(&[("classification", "reserved"), ("lane", "interactive")]),
            "reserved/interactive",
        ),
        (labels(&[("lane", "async")]), "overflow/async"),
        (
            labels(&[("classification", "reserved"), ("lane", "x")]),
            "reserved/batch",
        ),
        (
            labels(&[("classification", "overflow"), ("tier", "interactive")]),
            "overflow/batch",
        ),
        (
            labels(&[("classification", "reserved"), ("lane", "async")]),
            "reserved/async",
        ),
        (labels(&[("lane", "interactive")]), "overflow/interactive"),
    ];
    for (labels, band) in cases {
        assert!(gate.band(band).is_none(), "{band} not seen yet");
        touch(&gate, &labels).await;
        assert!(gate.band(band).is_some(), "{labels:?} is {band}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_capacity_refusal_decreases_its_band_and_the_ones_below_and_holds_the_ones_above() {
    let gate = three_bands().await;
    advance(MS).await;
    gate.observe(&overflow_interactive(), &saturated(Instant::now()));
    assert_eq!(windows(&gate), [4.0, 2.0, 2.0]);
    advance(MS).await;
    assert_eq!(reserved_window_after_an_accept(&gate), 4.0, "held");
    advance(Duration::from_secs(1)).await;
    assert_eq!(
        reserved_window_after_an_accept(&gate),
        5.0,
        "the hold ran out"
    );
}

#[tokio::test(start_paused = true)]
async fn an_accept_below_sent_after_the_holds_evidence_clears_the_hold_and_an_older_one_does_not() {
    let gate = three_bands().await;
    let before = Instant::now();
    advance(MS).await;
    gate.observe(&batch(), &saturated(Instant::now()));
    advance(MS).await;
    gate.observe(&overflow_interactive(), &accepted(before));
    assert_eq!(
        reserved_window_after_an_accept(&gate),
        4.0,
        "an older accept proves nothing"
    );
    gate.observe(&overflow_interactive(), &accepted(Instant::now()));
    assert_eq!(windows(&gate)[1], 4.0, "the accepting band is held itself");
    assert_eq!(
        reserved_window_after_an_accept(&gate),
        5.0,
        "room below: the hold is cleared"
    );
}

#[tokio::test(start_paused = true)]
async fn a_refusal_from_a_flight_already_acted_on_neither_decreases_the_bands_below_nor_rearms_holds()
 {
    let gate = three_bands().await;
    let flight = Instant::now();
    advance(MS).await;
    gate.observe(&overflow_interactive(), &saturated(flight));
    assert_eq!(windows(&gate), [4.0, 2.0, 2.0]);
    advance(Duration::from_millis(600)).await;
    gate.observe(&overflow_interactive(), &saturated(flight));
    assert_eq!(windows(&gate), [4.0, 2.0, 2.0]);
    advance(Duration::from_millis(500)).await;
    assert_eq!(
        reserved_window_after_an_accept(&gate),
        5.0,
        "the first hold was not extended"
    );
}

#[tokio::test(start_paused = true)]
async fn a_ttl_expiry_shrinks_its_band_gently_and_holds_the_ones_above() {
    let gate = three_bands().await;
    advance(MS).await;
    let expired = GatewayOutcome {
        dropped_reason: Some("rejected-ttl-expired".to_owned()),
        ..answer(Instant::now(), 503)
    };
    gate.observe(&overflow_interactive(), &expired);
    let [top, middle, bottom] = windows(&gate);
    assert_near(middle, 3.6);
    assert_eq!((top, bottom), (4.0, 4.0));
    advance(MS).await;
    accept_n(&gate, &reserved_interactive(), 1);
    accept_n(&gate, &batch(), 1);
    assert_eq!(windows(&gate)[0], 4.0, "held");
    assert_eq!(windows(&gate)[2], 5.0, "below: untouched");
}
