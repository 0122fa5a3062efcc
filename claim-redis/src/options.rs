//! How to build a `RedisStore`: connection options, the time source, and the errors `connect` reports.

use crate::keys::KeyLayout;
use claim_core::Clock;
use claim_core::store::StoreConfig;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where lease time comes from.
#[derive(Debug, Clone)]
pub enum TimeSource {
    /// The Redis server's `TIME`, read inside the scripts: one clock for
    /// every replica, no client skew. Production.
    Server,
    /// An explicit time passed to every script (tests: a `ManualClock`).
    /// Redis still expires keys on its own clock, so in this mode the store
    /// also records the logical expiry of producer keys and compares it.
    Clock(Arc<dyn Clock>),
}

/// Everything [`crate::RedisStore::connect`] needs.
#[derive(Debug, Clone)]
pub struct RedisStoreOptions {
    /// `redis://[user[:password]@]host[:port][/db]` or `rediss://…` (TLS).
    pub url: String,
    pub config: StoreConfig,
    /// Prepended to every key; empty in production (so keys match the Go
    /// producer's), `test:<random>:` in tests.
    pub key_prefix: String,
    /// Connections in the pool (each one multiplexes many requests).
    pub pool_size: usize,
    /// Bound on every call: waiting for a connection, and the request itself.
    pub call_timeout: Duration,
    pub time: TimeSource,
    /// Which servers the URL names: one node, a cluster, or a Sentinel group.
    pub topology: Topology,
    /// Trust and client identity for `rediss://` URLs.
    pub tls: TlsOptions,
    /// Replicas to `WAIT` for after each claim and ack batch (0: none).
    /// A `WAIT` that reaches fewer is logged and counted
    /// ([`crate::RedisStore::replica_ack_stats`]), never an error: the
    /// write happened on the primary. The split (cross-slot) ack waits on
    /// the list's primary before its claim drop, and keeps the claim of a
    /// record no replica acknowledged (`ops/ack_cluster.rs`).
    pub replica_acks: u32,
    /// How keys are named: [`KeyLayout::Plain`] (default; standalone and
    /// Sentinel) or [`KeyLayout::HashTagged`] (Redis Cluster: every call in
    /// one slot, checked before it is sent).
    pub key_layout: KeyLayout,
    /// A tracing span per Redis call (`redis`, target
    /// [`crate::CALL_SPAN_TARGET`], debug level: `db.system`,
    /// `db.operation`, `store.op`, `queue`), the transport config's
    /// `enable_tracing`. Off (the default), each call pays one check.
    pub trace_calls: bool,
}

/// Which Redis servers a store talks to. In every mode `url` stays the
/// first node (or first sentinel) and carries the credentials, `rediss://`
/// and (not in a cluster) the db, as Go's transport config does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Topology {
    /// One server (or a proxy): the URL.
    #[default]
    Standalone,
    /// A Redis Cluster: the URL's node plus `seeds` (`host:port` or URLs)
    /// to discover it. MOVED and ASK are followed by the client; keys use
    /// the hash-tagged layout.
    Cluster { seeds: Vec<String> },
    /// A primary found through Sentinel: the URL's host plus `sentinels`
    /// (`host:port` or URLs) are asked for the current primary of
    /// `master_name` on every new connection, so after a failover new
    /// connections reach the promoted replica.
    Sentinel {
        sentinels: Vec<String>,
        master_name: String,
    },
}

impl Topology {
    /// `standalone`, `cluster` or `sentinel`, as in the transport config.
    pub fn mode(&self) -> &'static str {
        match self {
            Topology::Standalone => "standalone",
            Topology::Cluster { .. } => "cluster",
            Topology::Sentinel { .. } => "sentinel",
        }
    }
}

/// TLS settings for `rediss://` URLs (rustls). By default the system's
/// trusted roots verify the server; `ca_file` replaces them with a PEM
/// bundle (a private CA), and `client_cert` + `client_key` (PEM) present a
/// client certificate to a server that requires one (`tls-auth-clients`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    pub ca_file: Option<PathBuf>,
    pub client_cert: Option<PathBuf>,
    pub client_key: Option<PathBuf>,
}

impl TlsOptions {
    /// True when nothing is set (system roots, no client certificate).
    pub fn is_default(&self) -> bool {
        *self == TlsOptions::default()
    }
}

impl RedisStoreOptions {
    /// Options with the defaults: pool of 8, 5 s per call, server time, no prefix.
    pub fn new(url: impl Into<String>, config: StoreConfig) -> Self {
        RedisStoreOptions {
            url: url.into(),
            config,
            key_prefix: String::new(),
            pool_size: 8,
            call_timeout: Duration::from_secs(5),
            time: TimeSource::Server,
            topology: Topology::Standalone,
            tls: TlsOptions::default(),
            replica_acks: 0,
            key_layout: KeyLayout::Plain,
            trace_calls: false,
        }
    }

    /// The key layout the store will use: a cluster runs every call in one
    /// slot, so the hash-tagged layout there, whatever `key_layout` says.
    pub(crate) fn layout(&self) -> KeyLayout {
        match self.topology {
            Topology::Cluster { .. } => KeyLayout::HashTagged,
            _ => self.key_layout,
        }
    }
}

/// Why [`crate::RedisStore::connect`] failed. Each message names the input
/// and what to change. URLs in messages never show a password.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("invalid store configuration: {0}")]
    Config(String),
    #[error(
        "invalid Redis URL `{url}`: {reason}; expected redis://[user[:password]@]host[:port][/db] or rediss://… for TLS"
    )]
    Url { url: String, reason: String },
    #[error("invalid option {option}: {reason}")]
    Option {
        option: &'static str,
        reason: String,
    },
    #[error(
        "cannot reach Redis at `{url}`: {detail}; check that redis-server is running there and that host, port, user, password and db in the URL are right"
    )]
    Unreachable { url: String, detail: String },
    #[error(
        "Redis at `{url}` refused the claim scripts: {detail}; the server must be Redis 6.2 or newer with scripting enabled"
    )]
    Scripts { url: String, detail: String },
    #[error("invalid {field} for {mode} topology: {reason}")]
    Topology {
        field: &'static str,
        mode: &'static str,
        reason: String,
    },
    #[error("cannot use TLS file {field} = `{path}`: {reason}")]
    Tls {
        field: &'static str,
        path: String,
        reason: String,
    },
    #[error(
        "Redis at `{url}` refused user `{user}`: {detail}; check the user name and password in the URL and that the ACL user is enabled (ACL LIST)"
    )]
    Auth {
        url: String,
        user: String,
        detail: String,
    },
    #[error(
        "TLS handshake with `{url}` failed: {detail}; check that the server's certificate is signed by the CA in tls.ca_file (or a system root) and names the host in the URL"
    )]
    Handshake { url: String, detail: String },
}

/// The URL with any password replaced by `***`, for messages and logs.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    let user = match userinfo.split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None if scheme.starts_with("redis") && !userinfo.is_empty() => {
            // `redis://secret@host` is a password-only URL in redis-rs.
            "***".to_owned()
        }
        None => userinfo.to_owned(),
    };
    format!("{scheme}://{user}@{host}{tail}")
}

/// Checks the URL's scheme and shape, naming what is wrong.
pub(crate) fn check_url(url: &str) -> Result<redis::ConnectionInfo, ConnectError> {
    use redis::IntoConnectionInfo;
    let bad = |reason: String| ConnectError::Url {
        url: redact(url),
        reason,
    };
    let scheme = url
        .split_once("://")
        .map(|(s, _)| s)
        .ok_or_else(|| bad("no scheme".into()))?;
    if !matches!(scheme, "redis" | "rediss" | "unix" | "redis+unix") {
        return Err(bad(format!("unsupported scheme `{scheme}`")));
    }
    url.into_connection_info().map_err(|e| bad(e.to_string()))
}

/// Checks everything but the URL.
pub(crate) fn check_options(options: &RedisStoreOptions) -> Result<(), ConnectError> {
    options.config.validate().map_err(ConnectError::Config)?;
    let (option, reason) = if options.pool_size == 0 {
        ("pool_size", "is 0: give the pool at least one connection")
    } else if options.call_timeout.is_zero() {
        (
            "call_timeout",
            "is zero: every call would time out; use a few seconds",
        )
    } else {
        return Ok(());
    };
    let reason = reason.into();
    Err(ConnectError::Option { option, reason })
}

/// Checks what the topology needs of the URL and its own fields, with
/// Go's rules: a cluster has only db 0; Sentinel needs `master_name`.
pub(crate) fn check_topology(
    options: &RedisStoreOptions,
    info: &redis::ConnectionInfo,
) -> Result<(), ConnectError> {
    let (field, reason) = match &options.topology {
        Topology::Cluster { .. } if info.redis_settings().db() != 0 => {
            let db = info.redis_settings().db();
            let reason = format!(
                "selects db {db}, but Redis Cluster has only db 0: drop `/{db}` from the URL"
            );
            ("url", reason)
        }
        Topology::Sentinel { master_name, .. } if master_name.trim().is_empty() => (
            "master_name",
            "is required: set it to the name the sentinels monitor (`sentinel monitor <name> …`)"
                .into(),
        ),
        _ => return Ok(()),
    };
    let mode = options.topology.mode();
    Err(ConnectError::Topology {
        field,
        mode,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_hides_passwords_and_keeps_the_rest() {
        assert_eq!(redact("redis://u:pw@h:1/2"), "redis://u:***@h:1/2");
        assert_eq!(redact("rediss://:pw@h"), "rediss://:***@h");
        assert_eq!(redact("redis://pw@h"), "redis://***@h");
        assert_eq!(redact("redis://h:6379/0"), "redis://h:6379/0");
        assert_eq!(redact("nonsense"), "nonsense");
    }

    #[test]
    fn urls_with_users_passwords_dbs_and_tls_are_accepted() {
        for url in [
            "redis://127.0.0.1:6379",
            "redis://u:p@h:1/3",
            "rediss://:p@h/0",
        ] {
            assert!(check_url(url).is_ok(), "{url}");
        }
    }

    #[test]
    fn bad_urls_are_refused_with_the_url_and_the_expected_shape() {
        for url in ["http://h", "localhost:6379", "redis://h/notadb"] {
            let err = check_url(url).unwrap_err().to_string();
            assert!(err.contains("expected redis://"), "{err}");
        }
        let err = check_url("ftp://u:secret@h").unwrap_err().to_string();
        assert!(!err.contains("secret"), "{err}");
    }

    #[test]
    fn a_cluster_url_with_a_db_and_a_sentinel_without_master_name_are_refused_naming_the_field() {
        let mut o = RedisStoreOptions::new("redis://h/2", StoreConfig::default());
        o.topology = Topology::Cluster { seeds: vec![] };
        let info = check_url(&o.url).unwrap();
        let err = check_topology(&o, &info).unwrap_err().to_string();
        assert!(err.contains("url") && err.contains("db 2"), "{err}");
        o.topology = Topology::Sentinel {
            sentinels: vec![],
            master_name: " ".into(),
        };
        let err = check_topology(&o, &info).unwrap_err().to_string();
        assert!(err.contains("master_name"), "{err}");
        o.topology = Topology::Standalone;
        assert!(check_topology(&o, &info).is_ok());
    }

    #[test]
    fn zero_pools_and_timeouts_are_refused() {
        let mut o = RedisStoreOptions::new("redis://h", StoreConfig::default());
        o.pool_size = 0;
        assert!(
            check_options(&o)
                .unwrap_err()
                .to_string()
                .contains("pool_size")
        );
        o.pool_size = 1;
        o.call_timeout = Duration::ZERO;
        assert!(
            check_options(&o)
                .unwrap_err()
                .to_string()
                .contains("call_timeout")
        );
    }
}
