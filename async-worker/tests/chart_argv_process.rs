//! The real binary started with the upstream Go chart's argv and environment (deprecated flags, REDIS_URL, LOG_LEVEL) drains a queue and stops cleanly.

#[allow(dead_code)]
#[path = "../src/bin/async-worker/settings/tests/chart.rs"]
mod chart;
mod common;

use std::time::Duration;

use async_worker::test_support::gateway::{GatewayBehaviour, StandInGateway};
use chart::CHART_SINGLE_QUEUE;
use common::chart::start_as_chart;

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

    // The chart's argv in its order; only the gateway and the ports differ
    // (free ones, not 8081/9090).
    let swaps = [("http://igw:80", gateway.base_url())];
    let mut worker = start_as_chart(CHART_SINGLE_QUEUE, &swaps, &server.url());

    let bound = Duration::from_secs(30);
    common::eventually("a record for every request", bound, async || {
        common::depths(&mut conn).await.results >= ids.len()
    })
    .await;
    let (_, answered) = common::records_once_each(&mut conn).await;
    assert_eq!(answered, ids);

    // SIGTERM drains and exits 0.
    worker.signal("TERM");
    let code = worker.exit_within(bound).await.code();
    let text = worker.log();
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
}
