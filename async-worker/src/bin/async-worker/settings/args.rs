//! Every flag of `run` as a clap argument: ours (each with its `ASYNC_WORKER_*` variable), the Go processor's, and Go's deprecated ones; their doc comments are `--help` and the flag tables of docs/OPERATIONS.md.
//!
//! Go bool flags take `--flag` or `--flag=value` (never a separate word),
//! as Go's flag package reads them. A variable's name is its flag's,
//! upper-cased under `ASYNC_WORKER_` (`resolve::env_of`).

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Args;

/// The processor's flags.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The only transport, redis-sortedset (Go's default, redis-pubsub, and any other is refused); giving it makes the deprecated Go flags ignored [default: redis-sortedset].
    #[arg(long, value_name = "NAME")]
    pub transport: Option<String>,

    /// The transport config as inline JSON, in Go's field names; without one (or the deprecated flags) the processor drains request-sortedset into --igw-base-url + --request-path-url.
    #[arg(long, value_name = "JSON", conflicts_with = "transport_config_file")]
    pub transport_config: Option<String>,

    /// The transport config read from a JSON file.
    #[arg(long, value_name = "PATH")]
    pub transport_config_file: Option<PathBuf>,

    /// Redis URL (redis://, rediss:// or unix://, with user, password and db) when the transport config's `url` is empty, as in Go.
    #[arg(long, value_name = "URL", env = "REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,

    /// Gateway base URL for the default queue when there is no transport config [config: queues[].igw_base_url].
    #[arg(long, value_name = "URL", env = "ASYNC_WORKER_IGW_BASE_URL")]
    pub igw_base_url: Option<String>,

    /// Request path for the default queue when there is no transport config [config: queues[].request_path_url].
    #[arg(
        long,
        value_name = "PATH",
        default_value = "/v1/completions",
        env = "ASYNC_WORKER_REQUEST_PATH_URL"
    )]
    pub request_path_url: String,

    /// Crash-detection window: a claim not renewed for this long is redelivered (heartbeats renew every ttl/3, 1 s..30 s apart); at least 3 s [default: 300s; bare number = seconds; config: claim_lease_ttl_seconds].
    #[arg(
        long,
        value_name = "DURATION",
        allow_hyphen_values = true,
        env = "ASYNC_WORKER_CLAIM_LEASE_TTL"
    )]
    pub claim_lease_ttl: Option<String>,

    /// How often expired claims are scanned, which bounds how long a crashed replica's work waits beyond its lease [default: 15000ms; bare number = milliseconds; config: claim_reclaim_interval_ms].
    #[arg(
        long,
        value_name = "DURATION",
        allow_hyphen_values = true,
        env = "ASYNC_WORKER_CLAIM_RECLAIM_INTERVAL"
    )]
    pub claim_reclaim_interval: Option<String>,

    /// How long a terminal marker lives after an answer (a retried ack or a resubmission of the same bytes is suppressed within it; about 100 B of Redis per request); longer than the lease, at most 30 days [default: 21600s; bare number = seconds; config: result_dedup_ttl_seconds].
    #[arg(
        long,
        value_name = "DURATION",
        allow_hyphen_values = true,
        env = "ASYNC_WORKER_RESULT_DEDUP_TTL"
    )]
    pub result_dedup_ttl: Option<String>,

    /// Lease expiries before a request gets a DELIVERY_LIMIT record and moves to `<queue>:dead`; 0 = unlimited [default: 10; config: max_deliveries].
    #[arg(long, value_name = "N", env = "ASYNC_WORKER_MAX_DELIVERIES")]
    pub max_deliveries: Option<u32>,

    /// Requests handled at once per replica (all queues share them), at most 10000.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub concurrency: usize,

    /// Upper bound of one gateway call; the request's deadline bounds it too [bare number = seconds].
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "5m",
        allow_hyphen_values = true
    )]
    pub request_timeout: String,

    /// How long SIGTERM waits for in-flight work before stopping it and sweeping its claims back [bare number = seconds].
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "2m",
        allow_hyphen_values = true
    )]
    pub drain_timeout: String,

    /// Port of the Prometheus `/metrics` endpoint; 0 turns it off.
    #[arg(long, value_name = "PORT", default_value_t = 9090)]
    pub metrics_port: u16,

    /// Port of `/healthz`, `/readyz` and `/status`; 0 turns them off.
    #[arg(long, value_name = "PORT", default_value_t = 8081)]
    pub health_port: u16,

    /// Address the metrics and health endpoints listen on [default: :: (IPv6 and IPv4; 0.0.0.0 without IPv6); config: bind_address].
    #[arg(long, value_name = "IP", env = "ASYNC_WORKER_BIND_ADDRESS")]
    pub bind_address: Option<IpAddr>,

    /// CA bundle (PEM) that signs the Redis server's certificate, for rediss:// URLs (Go's --tls-* flags are about the gateway) [default: the system's roots; config: redis_tls_ca_file].
    #[arg(long, value_name = "PATH", env = "ASYNC_WORKER_REDIS_TLS_CA_FILE")]
    pub redis_tls_ca_file: Option<PathBuf>,

    /// Client certificate (PEM) for a Redis that requires one [config: redis_tls_cert_file].
    #[arg(long, value_name = "PATH", env = "ASYNC_WORKER_REDIS_TLS_CERT_FILE")]
    pub redis_tls_cert_file: Option<PathBuf>,

    /// Private key (PEM) of --redis-tls-cert-file [config: redis_tls_key_file].
    #[arg(long, value_name = "PATH", env = "ASYNC_WORKER_REDIS_TLS_KEY_FILE")]
    pub redis_tls_key_file: Option<PathBuf>,

    /// Replicas each claim and ack batch waits for (Redis WAIT); a shortfall is logged, not an error [default: 0; config: replica_acks].
    #[arg(long, value_name = "N", env = "ASYNC_WORKER_REPLICA_ACKS")]
    pub replica_acks: Option<u32>,

    /// Refuse to start when Redis lacks AOF persistence or `maxmemory-policy noeviction` [default: false; config: require_durability].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = go_bool, env = "ASYNC_WORKER_REQUIRE_DURABILITY")]
    pub require_durability: Option<bool>,

    /// Refuse a transport config with fields this processor does not know [default: false, warn and ignore them as Go does; config: strict_config].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = go_bool, env = "ASYNC_WORKER_STRICT_CONFIG")]
    pub strict_config: Option<bool>,

    /// Flags of the Go processor.
    #[command(flatten)]
    pub go: GoFlags,

    /// Deprecated Go flags the chart still passes.
    #[command(flatten)]
    pub legacy: LegacyFlags,
}

/// Flags of today's Go processor beyond the ones `RunArgs` declares itself.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Go processor flags (see docs/OPERATIONS.md, \"Go flags\")")]
pub struct GoFlags {
    /// How often the broker backlog gauges read each pending set's size (Go duration; 0 turns the poll off).
    #[arg(long, value_name = "DURATION", default_value = "15s")]
    pub metrics_backlog_poll_interval: String,

    /// `=false` (the chart's default) accepted; true (Go's default without the flag) refused: /metrics has no authentication here, so restrict who reaches the port (NetworkPolicy).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = go_bool)]
    pub metrics_endpoint_auth: Option<bool>,

    /// `0` accepted; anything else refused: the transport config is read once (restart the pods to change queues).
    #[arg(long, value_name = "DURATION")]
    pub transport_config_watch_interval: Option<String>,

    /// The bound of a pool gate's wait (Go duration; 0: until the request's deadline) [default: 5m].
    #[arg(long, value_name = "DURATION")]
    pub gate_wait_timeout: Option<String>,

    /// Worker pools with their workers and pool gates (a JSON array); needs a transport or queues config, as in Go.
    #[arg(long, value_name = "PATH")]
    pub pool_config_file: Option<String>,

    /// Request transforms (`gcs_uri_multipart`); a request they refuse ends INVALID_REQUEST with Go's message.
    #[arg(long, value_name = "PATH")]
    pub transform_config_file: Option<String>,

    /// The merge policy: random-robin (the default) or tier-priority (its headers, and the tier order at claim time).
    #[arg(long, value_name = "PATH", alias = "request-merge-policy-config")]
    pub request_merge_policy_config_file: Option<String>,

    /// The Prometheus the metric gates query.
    #[arg(long, value_name = "URL")]
    pub prometheus_url: Option<String>,

    /// How long the metric gates keep a Prometheus answer (Go duration; 0 turns caching off) [default: 5s].
    #[arg(long, value_name = "DURATION")]
    pub prometheus_cache_ttl: Option<String>,

    /// Refused when non-empty: custom TLS towards the gateway is not implemented (the system's roots verify it).
    #[arg(long, value_name = "PATH")]
    pub tls_ca_cert: Option<String>,

    /// Refused when non-empty: client certificates towards the gateway are not implemented.
    #[arg(long, value_name = "PATH")]
    pub tls_cert: Option<String>,

    /// Refused when non-empty (see --tls-cert).
    #[arg(long, value_name = "PATH")]
    pub tls_key: Option<String>,

    /// `=false` accepted; true refused: the gateway's certificate is always verified.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = go_bool)]
    pub tls_insecure_skip_verify: Option<bool>,

    /// Go's log verbosity: accepted with a warning, no effect (set --zap-log-level, LOG_LEVEL or RUST_LOG).
    #[arg(
        short = 'v',
        long = "v",
        value_name = "LEVEL",
        allow_negative_numbers = true
    )]
    pub verbosity: Option<i64>,

    /// Go's zap flag: accepted with a warning, no effect.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = go_bool)]
    pub zap_devel: Option<bool>,

    /// Log lines as `json` or `console` text [default: console on a terminal, else json].
    #[arg(long, value_name = "ENCODER")]
    pub zap_encoder: Option<String>,

    /// Log level: debug, info, warn, error, panic or a number (1 = debug, 2+ = trace); wins over LOG_LEVEL, RUST_LOG wins over it [default: LOG_LEVEL, else info].
    #[arg(long, value_name = "LEVEL")]
    pub zap_log_level: Option<String>,

    /// Go's zap flag: accepted with a warning, no effect.
    #[arg(long, value_name = "LEVEL")]
    pub zap_stacktrace_level: Option<String>,

    /// Go's zap flag: accepted with a warning, no effect.
    #[arg(long, value_name = "ENCODING")]
    pub zap_time_encoding: Option<String>,
}

/// The deprecated flags the Go chart on main still passes, mapped onto the
/// transport config unless a `--transport*` flag is given (then ignored).
/// Each one's help is "Deprecated: use <what replaces it>.", which its
/// deprecation note repeats (`go::legacy_config`, which finds the flags
/// given by serializing these fields).
#[derive(Debug, Clone, Args, serde::Serialize)]
#[command(next_help_heading = "Deprecated Go flags (mapped onto the transport config)")]
pub struct LegacyFlags {
    /// Deprecated: use --transport.
    #[arg(long = "message-queue-impl", value_name = "NAME")]
    pub message_queue_impl: Option<String>,

    /// Deprecated: use url in --transport-config (or REDIS_URL).
    #[arg(long = "redis.url", value_name = "URL")]
    pub legacy_redis_url: Option<String>,

    /// Deprecated: use result_queue_name in --transport-config.
    #[arg(long = "redis.ss.result-queue-name", value_name = "NAME")]
    pub ss_result_queue_name: Option<String>,

    /// Deprecated: use poll_interval_ms in --transport-config.
    #[arg(
        long = "redis.ss.poll-interval-ms",
        value_name = "MS",
        allow_hyphen_values = true
    )]
    pub ss_poll_interval_ms: Option<i64>,

    /// Deprecated: use batch_size in --transport-config.
    #[arg(
        long = "redis.ss.batch-size",
        value_name = "N",
        allow_hyphen_values = true
    )]
    pub ss_batch_size: Option<i64>,

    /// Deprecated: use queues in --transport-config.
    #[arg(long = "redis.ss.queues-config", value_name = "JSON")]
    pub ss_queues_config: Option<String>,

    /// Deprecated: use queues in --transport-config-file.
    #[arg(long = "redis.ss.queues-config-file", value_name = "PATH")]
    pub ss_queues_config_file: Option<PathBuf>,

    /// Deprecated: use queues[].igw_base_url in --transport-config.
    #[arg(long = "redis.ss.igw-base-url", value_name = "URL")]
    pub ss_igw_base_url: Option<String>,

    /// Deprecated: use queues[].request_path_url in --transport-config.
    #[arg(long = "redis.ss.request-path-url", value_name = "PATH")]
    pub ss_request_path_url: Option<String>,

    /// Deprecated: use queues[].queue_name in --transport-config.
    #[arg(long = "redis.ss.request-queue-name", value_name = "NAME")]
    pub ss_request_queue_name: Option<String>,

    /// Deprecated: use queues[].gate_type in --transport-config.
    #[arg(long = "redis.ss.gate-type", value_name = "TYPE")]
    pub ss_gate_type: Option<String>,

    /// Deprecated: use queues[].gate_params in --transport-config.
    #[arg(long = "redis.ss.gate-params", value_name = "JSON")]
    pub ss_gate_params: Option<String>,

    /// Deprecated: use queues[].inference_objective in --transport-config.
    #[arg(long = "redis.ss.inference-objective", value_name = "NAME")]
    pub ss_inference_objective: Option<String>,

    /// Deprecated: use enable_tracing in --transport-config.
    #[arg(long = "redis-tracing", value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = go_bool)]
    pub redis_tracing: Option<bool>,
}

/// A boolean as Go's `strconv.ParseBool` reads it.
fn go_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err("expected true or false (Go also reads 1, 0, t, f, TRUE, False...)".into()),
    }
}
