//! The Go processor's own flags (current and deprecated) as `clap` arguments, spelt as Go spells them.
//!
//! Only the declarations live here: `settings::compat` decides, per flag,
//! whether it is honoured, accepted with a warning or refused, and
//! `settings::legacy` maps the deprecated `--redis.ss.*` family onto the
//! transport config. Go bool flags take `--flag` or `--flag=value` (never a
//! separate word), as Go's flag package reads them.

use std::path::PathBuf;

use clap::Args;

/// Flags of today's Go processor beyond the ones `RunArgs` declares itself.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Go processor flags (see docs/OPERATIONS.md, \"Go flags\")")]
pub struct GoFlags {
    /// How often the broker backlog gauges poll each pending set (Go duration; 0 turns the poll off).
    #[arg(long, value_name = "DURATION", default_value = "15s")]
    pub metrics_backlog_poll_interval: String,

    /// Must be false: this version serves /metrics without authentication (refused when true).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = go_bool)]
    pub metrics_endpoint_auth: Option<bool>,

    /// Only 0 (no hot reload): the transport config is read once at start.
    #[arg(long, value_name = "DURATION")]
    pub transport_config_watch_interval: Option<String>,

    /// Accepted, no effect: no gate in this version ever closes.
    #[arg(long, value_name = "DURATION")]
    pub gate_wait_timeout: Option<String>,

    /// Refused: worker pools are not implemented.
    #[arg(long, value_name = "PATH")]
    pub pool_config_file: Option<String>,

    /// Refused: request body transforms are not implemented.
    #[arg(long, value_name = "PATH")]
    pub transform_config_file: Option<String>,

    /// Refused: request merge policies are not implemented.
    #[arg(long, value_name = "PATH", alias = "request-merge-policy-config")]
    pub request_merge_policy_config_file: Option<String>,

    /// Accepted, no effect: only gates read Prometheus, and this version has none.
    #[arg(long, value_name = "URL")]
    pub prometheus_url: Option<String>,

    /// Accepted, no effect (see --prometheus-url).
    #[arg(long, value_name = "DURATION")]
    pub prometheus_cache_ttl: Option<String>,

    /// Refused: custom TLS towards the gateway is not implemented.
    #[arg(long, value_name = "PATH")]
    pub tls_ca_cert: Option<String>,

    /// Refused: client certificates towards the gateway are not implemented.
    #[arg(long, value_name = "PATH")]
    pub tls_cert: Option<String>,

    /// Refused: client certificates towards the gateway are not implemented.
    #[arg(long, value_name = "PATH")]
    pub tls_key: Option<String>,

    /// Refused when true: the gateway's certificate is always verified.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = go_bool)]
    pub tls_insecure_skip_verify: Option<bool>,

    /// Go's log verbosity: accepted, no effect (set LOG_LEVEL or RUST_LOG).
    #[arg(
        short = 'v',
        long = "v",
        value_name = "LEVEL",
        allow_negative_numbers = true
    )]
    pub verbosity: Option<i64>,

    /// Go's zap logging flag: accepted, no effect (set LOG_LEVEL or RUST_LOG).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = go_bool)]
    pub zap_devel: Option<bool>,

    /// Log lines as `json` or `console` text [default: console on a terminal, else json].
    #[arg(long, value_name = "ENCODER")]
    pub zap_encoder: Option<String>,

    /// Log level: debug, info, warn, error, panic or a number (1 = debug, 2+ = trace); wins over LOG_LEVEL, RUST_LOG wins over it [default: LOG_LEVEL, else info].
    #[arg(long, value_name = "LEVEL")]
    pub zap_log_level: Option<String>,

    /// Go's zap logging flag: accepted, no effect.
    #[arg(long, value_name = "LEVEL")]
    pub zap_stacktrace_level: Option<String>,

    /// Go's zap logging flag: accepted, no effect.
    #[arg(long, value_name = "ENCODING")]
    pub zap_time_encoding: Option<String>,
}

/// The deprecated flags the Go chart on main still passes, mapped onto the
/// transport config unless a `--transport*` flag is given (then ignored).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Deprecated Go flags (mapped onto the transport config)")]
pub struct LegacyFlags {
    /// Deprecated: use --transport. Only redis-sortedset is accepted.
    #[arg(long = "message-queue-impl", value_name = "NAME")]
    pub message_queue_impl: Option<String>,

    /// Deprecated: use url in --transport-config.
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

    /// Deprecated: use queues in --transport-config (a JSON array of queue objects).
    #[arg(long = "redis.ss.queues-config", value_name = "JSON")]
    pub ss_queues_config: Option<String>,

    /// Deprecated: use --transport-config-file (this file holds only the queues array).
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

    /// Deprecated: use queues[].gate_params in --transport-config (a JSON object).
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
pub(super) fn go_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err("expected true or false (Go also reads 1, 0, t, f, TRUE, False...)".into()),
    }
}
