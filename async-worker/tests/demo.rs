//! The demo end to end, on memory and on Redis: a replica hard-stopped mid-run loses nothing, and payloads submitted by reference end as they must.
//!
//! The demo lives in the binary, so this runs `async-worker demo` as a
//! process, as the README does.

mod common;

use std::process::Stdio;
use std::time::Duration;

/// Far more than the demo needs (a few seconds); the bound on a hung run.
const DEMO_BOUND: Duration = Duration::from_secs(120);

/// Runs `async-worker demo` with `args`, which must pass (every request
/// has exactly one terminal record); what it printed.
async fn passing_demo(args: &[&str]) -> String {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_async-worker"))
        .arg("demo")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the demo starts");
    let output = tokio::time::timeout(DEMO_BOUND, child.wait_with_output())
        .await
        .expect("the demo finishes within its bound")
        .expect("the demo runs");
    let text = common::printed(&output, "\n");
    assert!(
        output.status.success() && text.contains("PASS"),
        "every request has exactly one terminal record; demo said:\n{text}"
    );
    text
}

/// The demo's `by reference` row says `refs` requests went by reference,
/// `missing` of them without a payload, each answered `PAYLOAD_UNAVAILABLE`,
/// and no payload key was left.
fn assert_payload_row(text: &str, refs: usize, missing: usize) {
    let row = format!(
        "{refs} ({missing} without a payload: {missing} PAYLOAD_UNAVAILABLE records); 0 payload keys left for answered requests"
    );
    assert!(text.contains(&row), "expected `{row}`; demo said:\n{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_demo_with_a_hard_stopped_replica_loses_nothing() {
    let text = passing_demo(&[
        "--requests",
        "600",
        "--replicas",
        "3",
        "--kill-after",
        "0.2",
        "--claim-lease-ttl",
        "1s",
        "--concurrency",
        "16",
    ])
    .await;
    assert_payload_row(&text, 300, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_demo_answers_missing_payloads_unavailable_and_leaves_no_payload_key() {
    let Some(server) = common::redis_server() else {
        return;
    };
    let url = server.url();
    let text = passing_demo(&[
        "--redis",
        &url,
        "--requests",
        "400",
        "--replicas",
        "2",
        "--kill-after",
        "0.2",
        "--claim-lease-ttl",
        "3s",
        "--concurrency",
        "16",
        "--payload-ref",
        "0.25",
        "--missing-payloads",
        "7",
    ])
    .await;
    assert_payload_row(&text, 100, 7);
    // Only the terminal markers remain (they expire on their own): no
    // payload, active or sequence key, no queue bookkeeping.
    let mut conn = common::connect(&url).await;
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut conn)
        .await
        .expect("KEYS");
    let other: Vec<&String> = keys
        .iter()
        .filter(|k| !k.starts_with("result-terminal:"))
        .collect();
    assert!(other.is_empty(), "the demo left {other:?}");
    assert_eq!(keys.len(), 400, "one terminal marker per request");
}
