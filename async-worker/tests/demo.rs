//! The memory demo end to end: a replica hard-stopped mid-run loses nothing.
//!
//! The demo lives in the binary, so this runs `async-worker demo` as a
//! process, as the README does.

use std::process::Stdio;
use std::time::Duration;

/// Far more than the demo needs (a few seconds); the bound on a hung run.
const DEMO_BOUND: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_demo_with_a_hard_stopped_replica_loses_nothing() {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_async-worker"))
        .args(["demo", "--requests", "600", "--replicas", "3"])
        .args(["--kill-after", "0.2", "--claim-lease-ttl", "1s"])
        .args(["--concurrency", "16"])
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
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("PASS"),
        "every request has exactly one terminal record; demo said:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
