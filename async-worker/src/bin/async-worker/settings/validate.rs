//! Why settings are refused: the one error type (each message names the input and the fix), and the validation pass over the resolved settings: the checks between settings and the bounds each must stay within.

use super::{ProcessorSettings, RedisTls};
pub use claim_core::store::MAX_BATCH;
use claim_core::store::{MAX_RESULT_DEDUP_TTL_MS, MIN_LEASE_TTL_MS};

/// Most requests handled at once per replica: bounds the ack and renew
/// batches the runtime builds from held claims (chunked, but each chunk
/// still travels in one call) and the memory held for them.
pub const MAX_CONCURRENCY: usize = 10_000;

/// A flag, variable or transport config value the processor cannot run
/// with: one line naming the input (a flag such as `--claim-lease-ttl`, or
/// a config path such as `queues[0].igw_base_url`) and the fix. The binary
/// prints it and exits with code 2.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A flag, its value, a file it names, or a transport config value
    /// (`input` is then `<origin>: <field>`).
    #[error("{input}: {detail}; {fix}")]
    Invalid {
        input: String,
        detail: String,
        fix: String,
    },

    #[error(
        "{origin}: unknown field {field} ({detail}); remove it or correct its spelling (the config uses the Go processor's snake_case names), or drop --strict-config to have it ignored with a warning"
    )]
    UnknownConfigField {
        origin: String,
        field: String,
        detail: String,
    },

    #[error(
        "url is required (set url in the transport config or REDIS_URL); --redis-url (or the deprecated --redis.url) gives it too, e.g. redis://redis:6379"
    )]
    MissingRedisUrl,

    #[error(
        "{field} {url:?} is not a Redis URL ({reason}): use redis://host:port[/db], rediss://host:port for TLS, or unix:///path/to/redis.sock"
    )]
    RedisUrl {
        field: String,
        url: String,
        reason: String,
    },
}

impl SettingsError {
    /// The process exit code for this error: always 2 (bad input).
    pub fn exit_code(&self) -> u8 {
        2
    }

    pub(crate) fn invalid(
        input: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        SettingsError::Invalid {
            input: input.into(),
            detail: detail.into(),
            fix: fix.into(),
        }
    }

    /// `<flag> is not supported: <reason>; <fix>`.
    pub(crate) fn unsupported(
        flag: impl std::fmt::Display,
        reason: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        SettingsError::invalid(format!("{flag} is not supported"), reason, fix)
    }

    /// A file a flag names could not be read.
    pub(crate) fn unreadable(flag: &str, path: &std::path::Path, e: std::io::Error) -> Self {
        let input = format!("{flag} {}", path.display());
        let fix = "check the path and its permissions";
        SettingsError::invalid(input, format!("cannot read it: {e}"), fix)
    }
}

/// The checks between settings, and the bounds each must stay within, in
/// the order they are reported; each error names the flag or field an
/// operator sets. The store's limits are claim-core's constants, which
/// `StoreConfig::validate` enforces too: checked here first so the message
/// names the flag and the config field.
pub(super) fn validate(s: &ProcessorSettings) -> Result<(), SettingsError> {
    let (store, runtime) = (&s.store, &s.runtime);
    let pools = &s.flow.pools;
    let listed = |pool: &&String| pools.is_empty() || pools.iter().any(|p| &p.id == *pool);
    let missing_pool = runtime
        .queues
        .iter()
        .map(|q| &q.pool_name)
        .find(|p| !listed(p));
    let (lease_ms, dedup_s) = (store.lease_ttl_ms, store.result_dedup_ttl_ms / 1000);
    let (min_lease_s, max_dedup_s) = (MIN_LEASE_TTL_MS / 1000, MAX_RESULT_DEDUP_TTL_MS / 1000);
    let (batch, concurrency) = (runtime.batch_size, runtime.concurrency);
    // (refused, input, detail, fix), in the order they are reported.
    let checks = [
        (
            s.redis_tls != RedisTls::default() && !s.redis_url.starts_with("rediss://"),
            "--redis-tls-ca-file / --redis-tls-cert-file / --redis-tls-key-file (config: redis_tls_*)",
            "TLS files are given but the Redis URL is not rediss://".to_owned(),
            "use a rediss:// URL to connect with TLS, or drop the TLS files".to_owned(),
        ),
        (
            s.redis_tls.cert_file.is_some() != s.redis_tls.key_file.is_some(),
            "--redis-tls-cert-file / --redis-tls-key-file (config: redis_tls_cert_file / redis_tls_key_file)",
            "only one of the client certificate and its key is given".to_owned(),
            "give both files, or neither".to_owned(),
        ),
        (
            missing_pool.is_some(),
            "--pool-config-file",
            format!(
                "worker pool {:?} specified in queue config not found in pool configuration",
                missing_pool.map_or("", String::as_str)
            ),
            "list the pool in the pools file, or set the queue's worker_pool_id to a listed pool"
                .to_owned(),
        ),
        (
            concurrency == 0,
            "--concurrency",
            "0 handles nothing".to_owned(),
            "give it at least 1 (default 64)".to_owned(),
        ),
        (
            lease_ms < MIN_LEASE_TTL_MS,
            "claim lease TTL (--claim-lease-ttl / claim_lease_ttl_seconds)",
            format!(
                "{lease_ms} ms is below the minimum of {min_lease_s} s (heartbeats renew every ttl/3, at least 1 s apart)"
            ),
            format!("set it to {min_lease_s}s or more"),
        ),
        (
            store.result_dedup_ttl_ms > MAX_RESULT_DEDUP_TTL_MS,
            "result dedup TTL (--result-dedup-ttl / result_dedup_ttl_seconds)",
            format!("{dedup_s} s is above the maximum of 30 days"),
            format!("set it to 30 days ({max_dedup_s} s) or less"),
        ),
        (
            batch > MAX_BATCH,
            "batch_size",
            format!("{batch} is above the {MAX_BATCH} members one claim call handles"),
            format!("set batch_size to {MAX_BATCH} or less"),
        ),
        (
            concurrency > MAX_CONCURRENCY,
            "--concurrency",
            format!("{concurrency} is above the maximum of {MAX_CONCURRENCY}"),
            format!("set it to {MAX_CONCURRENCY} or less, and run more replicas instead"),
        ),
    ];
    if let Some((_, input, detail, fix)) = checks.into_iter().find(|c| c.0) {
        return Err(SettingsError::invalid(input, detail, fix));
    }
    // Never refused after the checks above; kept so the runtime's own rules hold here too.
    let adjust = "adjust the flags or config fields named";
    (runtime.validate())
        .map_err(|e| SettingsError::invalid("runtime settings", e.to_string(), adjust))?;
    store
        .validate()
        .map_err(|e| SettingsError::invalid("claim settings", e, adjust))?;
    // Queue names, the retry set and every configured result list must not
    // meet each other or the bookkeeping keys they imply.
    let queues: Vec<&str> = runtime
        .queues
        .iter()
        .map(|q| q.queue_name.as_str())
        .collect();
    let mut lists = vec![store.default_result_list.as_str()];
    for list in runtime
        .queues
        .iter()
        .filter_map(|q| q.result_queue_name.as_deref())
    {
        if !lists.contains(&list) {
            lists.push(list);
        }
    }
    claim_core::keys::check_names(&queues, &store.retry_set, &lists).map_err(|detail| {
        SettingsError::invalid(
            "key names (queues[].queue_name, retry_queue_name, result_queue_name)",
            detail,
            "names must not collide; see docs/OPERATIONS.md, \"Key names\"",
        )
    })
}
