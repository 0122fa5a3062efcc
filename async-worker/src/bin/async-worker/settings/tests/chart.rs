//! The argv the upstream Go chart renders (single queue; flow-control values; a single-queue gate) and its ConfigMap files, shared by the settings tests and the process tests that run the binary with them (`tests/chart_argv_process.rs`, `tests/chart_flow_process.rs`).

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

/// Where the chart mounts its ConfigMap (`<fullname>-config`).
pub const CHART_CONFIG_DIR: &str = "/etc/llm-d-async/config";

/// The argv the upstream chart (HEAD 5de949b, ap-deployments.yaml) renders
/// for these flow-control values with its defaults otherwise:
///
/// ```yaml
/// ap:
///   messageQueueImpl: redis-sortedset
///   prometheusURL: http://prometheus:9090
///   prometheusCacheTTL: 0s
///   workerPools:                    # -> CHART_WORKER_POOLS
///     - {id: default, workers: 2}
///     - id: batch-pool
///       workers: 4
///       gate_type: wait-on-refuse
///       gate_params:
///         gate: '{"gate_type":"composite","gate_params":{"gates":[...saturation e2e-pool 0.8, local-max-concurrency 50]}}'
///   requestMergePolicyConfig:       # -> CHART_MERGE_POLICY
///     type: tier-priority
///     parameters: {priority_header: x-gateway-priority}
///   redis:
///     enabled: true
///     queuesConfig:
///       - {queue_name: interactive-sortedset, worker_pool_id: default, igw_base_url: "http://igw:80",
///          request_path_url: /v1/completions, labels: {tier: interactive}, gate_type: redis-quota,
///          gate_params: {address: "redis:6379", attribute: team, mode: concurrency,
///                        gating_mode: classifying, limit: "1"}}
///       - {queue_name: batch-sortedset, worker_pool_id: batch-pool, igw_base_url: "http://igw:80",
///          request_path_url: /v1/completions, labels: {tier: batch}}
/// ```
///
/// `toJson` sorts keys; `quote` is undone by YAML, so the queues argument
/// is the JSON itself.
#[rustfmt::skip]
pub const CHART_FLOW_CONTROL: &[&str] = &[
    "--message-queue-impl=redis-sortedset",
    "--redis.ss.queues-config",
    r#"[{"gate_params":{"address":"redis:6379","attribute":"team","gating_mode":"classifying","limit":"1","mode":"concurrency"},"gate_type":"redis-quota","igw_base_url":"http://igw:80","labels":{"tier":"interactive"},"queue_name":"interactive-sortedset","request_path_url":"/v1/completions","worker_pool_id":"default"},{"igw_base_url":"http://igw:80","labels":{"tier":"batch"},"queue_name":"batch-sortedset","request_path_url":"/v1/completions","worker_pool_id":"batch-pool"}]"#,
    "--redis.ss.result-queue-name", "result-list",
    "--redis.ss.poll-interval-ms", "1000",
    "--redis.ss.batch-size", "10",
    "--prometheus-url=http://prometheus:9090",
    "--prometheus-cache-ttl=0s",
    "--pool-config-file=/etc/llm-d-async/config/worker-pools.json",
    "--request-merge-policy-config=/etc/llm-d-async/config/request-merge-policy.json",
    "--concurrency=64",
    "--drain-timeout=2m",
    "--health-port=8081",
    "--metrics-endpoint-auth=false",
    "--metrics-port=9090",
];

/// `worker-pools.json` of [`CHART_FLOW_CONTROL`]'s ConfigMap (`toJson`).
pub const CHART_WORKER_POOLS: (&str, &str) = (
    "worker-pools.json",
    r#"[{"id":"default","workers":2},{"gate_params":{"gate":"{\"gate_type\":\"composite\",\"gate_params\":{\"gates\":[{\"gate_type\":\"prometheus-saturation\",\"gate_params\":{\"pool\":\"e2e-pool\",\"threshold\":\"0.8\"}},{\"gate_type\":\"local-max-concurrency\",\"gate_params\":{\"limit\":50}}]}}"},"gate_type":"wait-on-refuse","id":"batch-pool","workers":4}]"#,
);

/// `request-merge-policy.json` of [`CHART_FLOW_CONTROL`]'s ConfigMap.
pub const CHART_MERGE_POLICY: (&str, &str) = (
    "request-merge-policy.json",
    r#"{"parameters":{"priority_header":"x-gateway-priority"},"type":"tier-priority"}"#,
);

/// The argv the chart renders for upstream's e2e `prometheus-query.yaml`
/// (the single-queue gate: `ap.redis.gateType: prometheus-query`,
/// `gateParams` {query, fallback "0.0"}, every value stringified by
/// `llm-d-async.gateParamsJson`; `concurrency: 1`, `prometheusURL`,
/// `prometheusCacheTTL: "0s"`, `pollIntervalMs: 500`), with the cluster's
/// addresses shortened to `igw:80` and `prometheus:9090`.
#[rustfmt::skip]
pub const CHART_SINGLE_QUEUE_GATE: &[&str] = &[
    "--message-queue-impl=redis-sortedset",
    "--redis.ss.igw-base-url=http://igw:80",
    "--redis.ss.request-path-url", "/v1/completions",
    "--redis.ss.request-queue-name", "query-request-sortedset",
    "--redis.ss.gate-type=prometheus-query",
    r#"--redis.ss.gate-params={"fallback":"0.0","query":"1 - inference_extension_flow_control_pool_saturation{inference_pool=\"e2e-pool\"}"}"#,
    "--redis.ss.result-queue-name", "query-result-list",
    "--redis.ss.poll-interval-ms", "500",
    "--redis.ss.batch-size", "10",
    "--prometheus-url=http://prometheus:9090",
    "--prometheus-cache-ttl=0s",
    "--concurrency=1",
    "--drain-timeout=2m",
    "--health-port=8081",
    "--metrics-endpoint-auth=false",
    "--metrics-port=9090",
];
