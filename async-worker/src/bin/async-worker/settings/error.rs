//! Why the processor's flags or transport config were refused: one line each, naming the field and the fix.

use std::path::PathBuf;

/// A flag or transport config value the processor cannot run with.
///
/// Every message is one line that names the field (a flag such as
/// `--claim-lease-ttl`, or a transport config path such as
/// `queues[0].igw_base_url`) and says how to fix it. The binary prints it and
/// exits with code 2.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error(
        "--transport {name:?} is not supported: this processor speaks only redis-sortedset; drop the flag or set --transport redis-sortedset"
    )]
    UnknownTransport { name: String },

    #[error(
        "{flag} {}: cannot read it: {source}; check the path and its permissions",
        path.display()
    )]
    UnreadableConfigFile {
        flag: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{origin} is not valid JSON: {detail}; fix the JSON syntax there")]
    ConfigSyntax { origin: String, detail: String },

    #[error(
        "{origin}: unknown field {field} ({detail}); remove it or correct its spelling (the config uses the Go processor's snake_case names), or drop --strict-config to have it ignored with a warning"
    )]
    UnknownConfigField {
        origin: String,
        field: String,
        detail: String,
    },

    #[error("{origin}: {field}: {detail}; {fix}")]
    ConfigValue {
        origin: String,
        field: String,
        detail: String,
        fix: String,
    },

    #[error("{field} {value:?} is not usable: {reason}; {fix}")]
    Duration {
        field: String,
        value: String,
        reason: String,
        fix: String,
    },

    #[error("{field} is missing: every queue needs the inference gateway's base URL; {fix}")]
    MissingIgwBaseUrl { field: String, fix: String },

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

    #[error("{field}: {detail}; {fix}")]
    Invalid {
        field: String,
        detail: String,
        fix: String,
    },
}

impl SettingsError {
    /// `<flag> is not supported: <reason>; <fix>`.
    pub(crate) fn unsupported(
        flag: impl std::fmt::Display,
        reason: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        SettingsError::invalid(format!("{flag} is not supported"), reason, fix)
    }

    /// The process exit code for this error: always 2 (bad input).
    pub fn exit_code(&self) -> u8 {
        2
    }

    pub(crate) fn invalid(
        field: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        SettingsError::Invalid {
            field: field.into(),
            detail: detail.into(),
            fix: fix.into(),
        }
    }
}
