//! The real binary started with the upstream Go chart's argv and environment (deprecated flags, REDIS_URL, LOG_LEVEL) drains a queue and stops cleanly.

mod common;

use std::fs::File;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use async_worker::test_support::gateway::{GatewayBehaviour, StandInGateway};
use common::worker::BINARY;

/// Kills the child on drop (a failed assertion must not leave it running).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_charts_argv_and_environment_run_a_working_processor() {
    let Some(server) = common::redis_server() else {
        return;
    };
    let gateway = StandInGateway::start(GatewayBehaviour::default())
        .await
        .expect("start the stand-in gateway");
    let mut conn = common::connect(&server.url()).await;
    let ids = common::go_submit_numbered(&mut conn, 20).await;

    let igw = format!("--redis.ss.igw-base-url={}", gateway.base_url());
    let health = format!("--health-port={}", common::free_port());
    let metrics = format!("--metrics-port={}", common::free_port());
    // charts/llm-d-async ap-deployments.yaml, redis-sortedset single-queue
    // form, in its order; only the ports differ (free ones, not 8081/9090).
    #[rustfmt::skip]
    let argv = [
        "--message-queue-impl=redis-sortedset",
        igw.as_str(),
        "--redis.ss.request-path-url", "/v1/completions",
        "--redis.ss.request-queue-name", "request-sortedset",
        "--redis.ss.result-queue-name", "result-list",
        "--redis.ss.poll-interval-ms", "1000",
        "--redis.ss.batch-size", "10",
        "--concurrency=64",
        "--drain-timeout=2m",
        health.as_str(),
        "--metrics-endpoint-auth=false",
        metrics.as_str(),
        "--redis-tracing=true",
    ];
    let log = std::env::temp_dir().join(format!(
        "async-worker-chart-argv-{}.log",
        std::process::id()
    ));
    let out = File::create(&log).expect("create the log");
    let child = Command::new(BINARY)
        .args(argv)
        .env("REDIS_URL", server.url())
        .env("LOG_LEVEL", "info")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(out.try_clone().expect("clone the log handle"))
        .stderr(out)
        .spawn()
        .expect("start async-worker");
    let mut worker = Running(child);
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();

    let bound = Duration::from_secs(30);
    common::eventually("a record for every request", bound, async || {
        common::depths(&mut conn).await.results >= ids.len()
    })
    .await;
    let records = common::records(&mut conn).await;
    let counts = common::records_per_id(&records);
    assert!(
        counts.values().all(|n| *n == 1),
        "two records for one request"
    );
    assert_eq!(
        counts
            .into_keys()
            .collect::<std::collections::BTreeSet<_>>(),
        ids
    );

    // SIGTERM drains and exits 0.
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(worker.0.id().to_string())
        .status()
        .expect("run kill");
    assert!(status.success());
    let started = Instant::now();
    let code = loop {
        if let Some(status) = worker.0.try_wait().expect("try_wait") {
            break status.code();
        }
        assert!(started.elapsed() < bound, "no exit; log:\n{}", read_log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let text = read_log();
    assert_eq!(code, Some(0), "log:\n{text}");
    for flag in [
        "--message-queue-impl",
        "--redis.ss.igw-base-url",
        "--redis.ss.batch-size",
        "--redis-tracing",
    ] {
        let warned = format!("{flag} is deprecated");
        assert_eq!(text.matches(&warned).count(), 1, "{warned}:\n{text}");
    }
    let _ = std::fs::remove_file(&log);
}
