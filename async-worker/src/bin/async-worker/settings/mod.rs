//! The processor's settings: the flags of `run` (and of `admin`, before or after its command) and the transport config, resolved into one [`ProcessorSettings`].
//!
//! `args.rs` declares every flag and `config.rs` the transport config JSON;
//! `resolve.rs` reads each setting by the rule `sources.rs` states (the
//! config's field, else the flag or its variable, else the default), then
//! `validate.rs` checks the whole; `go.rs` says what each Go flag does here,
//! and `redis.rs`, `queues.rs` and `flow.rs` read the connection, the queues
//! and flow control. Adding one of our settings: its flag in `args.rs` (its
//! doc comment is its line in docs/OPERATIONS.md, generated) and its field
//! in `config.rs`, read in `resolve.rs`.
//!
//! Decisions (DESIGN.md, "Flags and metrics"): the Redis URL keeps Go's rule
//! (the config's `url`, else `--redis-url` / `REDIS_URL`; no default).
//! Duration flags take Go syntax (`300s`, `1m30s`) or a bare number in the
//! flag's unit; zero and negative durations are errors. Without a transport
//! config the processor drains `request-sortedset` into `--igw-base-url` +
//! `--request-path-url`; the store's `default_queue` is the first configured
//! queue. Every current Go flag is honoured, accepted with a warning, or
//! refused; an unknown config field warns naming the closest known one.

mod args;
mod config;
mod flow;
mod go;
mod queues;
mod redis;
mod resolve;
mod sources;
mod validate;

pub use args::{GoFlags, LegacyFlags, RunArgs};
pub use async_worker::go_duration::{BareUnit, format_duration, parse_flag_duration};
pub use claim_redis::redact as redact_url;
pub use flow::FlowSettings;
pub use redis::RedisTls;
pub use validate::SettingsError;

use std::collections::BTreeMap;
use std::net::SocketAddr;

use async_worker::config::RuntimeConfig;
use async_worker::http_handler::HttpTarget;
use claim_core::store::StoreConfig;

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

#[cfg(test)]
mod tests;
#[cfg(test)]
pub use sources::env_of;
#[cfg(test)]
pub use validate::{MAX_BATCH, MAX_CONCURRENCY};
