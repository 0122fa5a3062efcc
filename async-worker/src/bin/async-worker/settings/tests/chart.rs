//! The upstream Go chart's argv, shared by the settings tests and the process test that runs the binary with it (`tests/chart_argv_process.rs`).

/// The upstream chart's argv on main for redis-sortedset, single-queue
/// form (charts/llm-d-async ap-deployments.yaml with default values and
/// `ap.otel.redisTracing`); `REDIS_URL` comes from the chart's secret.
#[rustfmt::skip]
pub const CHART_SINGLE_QUEUE: &[&str] = &[
    "--message-queue-impl=redis-sortedset",
    "--redis.ss.igw-base-url=http://igw:80",
    "--redis.ss.request-path-url", "/v1/completions",
    "--redis.ss.request-queue-name", "request-sortedset",
    "--redis.ss.result-queue-name", "result-list",
    "--redis.ss.poll-interval-ms", "1000",
    "--redis.ss.batch-size", "10",
    "--concurrency=64",
    "--drain-timeout=2m",
    "--health-port=8081",
    "--metrics-endpoint-auth=false",
    "--metrics-port=9090",
    "--redis-tracing=true",
];
