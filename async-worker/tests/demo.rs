//! The memory demo end to end: a replica hard-stopped mid-run loses nothing.

use async_worker::settings::DemoArgs;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_demo_with_a_hard_stopped_replica_loses_nothing() {
    let args = DemoArgs {
        redis: None,
        requests: 600,
        replicas: 3,
        kill_after: 0.2,
        claim_lease_ttl: Duration::from_secs(1),
        concurrency: 16,
    };
    let passed = async_worker::demo::run(args).await.expect("the demo runs");
    assert!(passed, "every request has exactly one terminal record");
}
