//! The processor's flags (`run`, and `admin` before its command) and transport config, resolved into [`ProcessorSettings`].
//!
//! Flags and config fields carry the Go processor's names (DESIGN.md, "Flags
//! and metrics"). Decisions:
//! - Precedence, for each of our own settings: the transport config's field
//!   (the spec: flags are "ignored when --transport-config supplies its own
//!   values"), else its flag, else its environment variable
//!   (`precedence::OURS`), else the default; a flag the config overrode is
//!   noted. The Redis URL keeps Go's rule (the config's `url`, else
//!   `--redis-url` / `REDIS_URL`).
//! - Duration flags take Go syntax (`300s`, `1m`, `500ms`, `1h30m`, `1.5s`) or
//!   a bare number: seconds for `--claim-lease-ttl`, `--result-dedup-ttl`,
//!   `--request-timeout` and `--drain-timeout`; milliseconds for
//!   `--claim-reclaim-interval`. Zero and negative durations are errors.
//! - In the config, `0`, `""` and `null` mean "not set", as in Go.
//! - Without a transport config the processor drains one queue,
//!   `request-sortedset`, sending to `--igw-base-url` + `--request-path-url`.
//! - The Redis URL comes from the config's `url`, else `--redis-url`, else
//!   `REDIS_URL`; there is no default (Go requires one too).
//! - The store's `default_queue` (where a promoted retry goes when its member
//!   names no queue) is the first configured queue.
//! - Go compatibility: unknown config fields are a warning (as Go ignores
//!   them) unless `--strict-config`; the deprecated flags the Go chart passes
//!   are mapped onto the transport config (`legacy`); every current Go flag
//!   is honoured, accepted with a warning, or refused (`compat`).

mod allow;
mod bounds;
mod compat;
mod error;
mod flow;
mod go_flags;
mod legacy;
mod mode;
pub mod precedence;
mod queues;
mod resolve;
#[cfg(test)]
mod tests;
mod transport;

pub use async_worker::go_duration::{BareUnit, format_duration, parse_flag_duration};
pub use error::SettingsError;
pub use flow::FlowSettings;
pub use go_flags::{GoFlags, LegacyFlags};
pub use mode::RedisTls;
pub use resolve::redact_url;

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use clap::Args;

use async_worker::config::RuntimeConfig;
use async_worker::http_handler::HttpTarget;
use claim_core::store::StoreConfig;

/// The processor's flags. Each of our own (not Go's) also reads an
/// environment variable, given by [`precedence::OURS`] when the command is
/// built (`Cli::full_command`); `--help` shows both it and the config field.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Transport; only redis-sortedset is supported [default: redis-sortedset].
    ///
    /// Giving it (or a transport config) makes the deprecated Go flags ignored.
    #[arg(long, value_name = "NAME")]
    pub transport: Option<String>,

    /// Transport config as inline JSON (Go field names).
    #[arg(long, value_name = "JSON", conflicts_with = "transport_config_file")]
    pub transport_config: Option<String>,

    /// Transport config read from a JSON file (Go field names).
    #[arg(long, value_name = "PATH")]
    pub transport_config_file: Option<PathBuf>,

    /// Redis URL when the transport config gives no `url`.
    #[arg(long, value_name = "URL", env = "REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,

    /// Gateway base URL for the default queue when there is no transport config [config: queues[].igw_base_url].
    #[arg(long, value_name = "URL")]
    pub igw_base_url: Option<String>,

    /// Request path for the default queue when there is no transport config [config: queues[].request_path_url].
    #[arg(long, value_name = "PATH", default_value = "/v1/completions")]
    pub request_path_url: String,

    /// Crash-detection window [default: 300s; bare number = seconds; config: claim_lease_ttl_seconds].
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub claim_lease_ttl: Option<String>,

    /// How often expired claims are scanned [default: 15000ms; bare number = milliseconds; config: claim_reclaim_interval_ms].
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub claim_reclaim_interval: Option<String>,

    /// Lifetime of terminal markers [default: 21600s; bare number = seconds; config: result_dedup_ttl_seconds].
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub result_dedup_ttl: Option<String>,

    /// Expired leases before a request is dead-lettered, 0 = unlimited [default: 10; config: max_deliveries].
    #[arg(long, value_name = "N")]
    pub max_deliveries: Option<u32>,

    /// Requests handled at once.
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

    /// How long shutdown waits for in-flight work before sweeping it back [bare number = seconds].
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

    /// Port of `/healthz` and `/readyz`; 0 turns them off.
    #[arg(long, value_name = "PORT", default_value_t = 8081)]
    pub health_port: u16,

    /// Address the metrics and health endpoints listen on [default: :: (IPv6 and IPv4; 0.0.0.0 without IPv6); config: bind_address].
    #[arg(long, value_name = "IP")]
    pub bind_address: Option<IpAddr>,

    /// CA bundle (PEM) that signs the Redis server's certificate, for rediss:// URLs [default: the system's roots; config: redis_tls_ca_file].
    #[arg(long, value_name = "PATH")]
    pub redis_tls_ca_file: Option<PathBuf>,

    /// Client certificate (PEM) for a Redis that requires one [config: redis_tls_cert_file].
    #[arg(long, value_name = "PATH")]
    pub redis_tls_cert_file: Option<PathBuf>,

    /// Private key (PEM) of --redis-tls-cert-file [config: redis_tls_key_file].
    #[arg(long, value_name = "PATH")]
    pub redis_tls_key_file: Option<PathBuf>,

    /// Replicas each claim and ack batch waits for (Redis WAIT); a shortfall is logged, not an error [default: 0; config: replica_acks].
    #[arg(long, value_name = "N")]
    pub replica_acks: Option<u32>,

    /// Refuse to start when Redis lacks AOF persistence or `maxmemory-policy noeviction` [default: false; config: require_durability].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = go_flags::go_bool)]
    pub require_durability: Option<bool>,

    /// Refuse a transport config with fields this processor does not know [default: false, warn and ignore them as Go does; config: strict_config].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = go_flags::go_bool)]
    pub strict_config: Option<bool>,

    /// Flags of the Go processor.
    #[command(flatten)]
    pub go: GoFlags,

    /// Deprecated Go flags the chart still passes.
    #[command(flatten)]
    pub legacy: LegacyFlags,
}

/// Where one queue's requests go.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSettings {
    /// The queue's id (metrics, logs, handler lookup).
    pub id: String,
    /// The pending sorted set.
    pub queue_name: String,
    /// The gateway target the default handler posts to.
    pub target: HttpTarget,
    /// Go's `worker_pool_id` (default `default`).
    pub worker_pool_id: String,
    /// Static labels.
    pub labels: BTreeMap<String, String>,
    /// Go's `gate_type` (`""` or `none`: no queue gate).
    pub gate_type: String,
    /// Go's `gate_params`, as given (values are usually strings).
    pub gate_params: async_worker::gate::GateParams,
}

/// Everything the processor needs, resolved from flags, config and environment.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessorSettings {
    pub redis_url: String,
    /// Standalone, cluster (seeds) or Sentinel (sentinels, master name).
    pub redis_mode: claim_redis::Topology,
    /// TLS files for a `rediss://` URL.
    pub redis_tls: RedisTls,
    /// Replicas each claim and ack batch waits for; 0 = none.
    pub replica_acks: u32,
    pub store: StoreConfig,
    pub runtime: RuntimeConfig,
    /// Per queue, in config order; `runtime.queues` lists the same queues.
    pub queues: Vec<QueueSettings>,
    /// Where `/metrics` listens; `None` when `--metrics-port 0`.
    pub metrics_addr: Option<SocketAddr>,
    /// Where `/healthz` and `/readyz` listen; `None` when `--health-port 0`.
    pub health_addr: Option<SocketAddr>,
    pub require_durability: bool,
    /// How log lines are written (`--zap-encoder`).
    pub log_format: crate::logging::LogFormat,
    /// The level `--zap-log-level` sets (an env-filter directive), if given.
    pub log_level: Option<&'static str>,
    /// A span per Redis call (`enable_tracing`); `run` keeps it only when
    /// spans are exported.
    pub redis_tracing: bool,
    /// Worker pools, merge policy, transforms and the gate flags.
    pub flow: FlowSettings,
    /// Things worth a warning at start: flags the config overrode, unknown
    /// fields, deprecated flags and Go flags without effect. One line each.
    pub notes: Vec<String>,
}

impl ProcessorSettings {
    /// How `run` and `admin` connect to Redis: the URL and the store settings.
    pub fn redis_options(&self) -> claim_redis::RedisStoreOptions {
        use claim_redis::{RedisStoreOptions, TlsOptions};
        RedisStoreOptions {
            topology: self.redis_mode.clone(),
            tls: TlsOptions {
                ca_file: self.redis_tls.ca_file.clone(),
                client_cert: self.redis_tls.cert_file.clone(),
                client_key: self.redis_tls.key_file.clone(),
            },
            replica_acks: self.replica_acks,
            trace_calls: self.redis_tracing,
            ..RedisStoreOptions::new(self.redis_url.clone(), self.store.clone())
        }
    }

    /// The gateway target per queue id, for [`HttpHandler::new`](async_worker::http_handler::HttpHandler::new).
    pub fn targets(&self) -> BTreeMap<String, HttpTarget> {
        self.queues
            .iter()
            .map(|q| (q.id.clone(), q.target.clone()))
            .collect()
    }
}

impl RunArgs {
    /// Resolves flags, the transport config and `REDIS_URL` into settings.
    pub fn resolve(&self) -> Result<ProcessorSettings, SettingsError> {
        resolve::resolve(self)
    }
}
