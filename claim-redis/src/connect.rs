//! Opening the connections for each topology (standalone pool, Sentinel-discovered primary, cluster client) with TLS and credentials from the URL; the version check and the script load on every node; connect errors that name the user, the field or the fix.

use crate::conn::{self, Backend, Conn, Handle, SentinelSource, Source};
use crate::options::{ConnectError, RedisStoreOptions, Topology};
use crate::scripts::Scripts;
use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
use redis::{
    AsyncConnectionConfig, ConnectionAddr, ConnectionInfo, ErrorKind, IntoConnectionInfo,
    RedisError, TlsCertificates, TlsMode,
};
use std::time::Duration;

/// Opens the connections `options.topology` asks for, checks the server
/// version and loads every script on every node.
pub(crate) async fn open(
    options: &RedisStoreOptions,
    info: ConnectionInfo,
    url: &str,
    scripts: &Scripts,
) -> Result<Conn, ConnectError> {
    let t = options.call_timeout;
    let tls = matches!(info.addr(), ConnectionAddr::TcpTls { .. });
    let certs = crate::tls::certificates(&options.tls, tls)?;
    let errors = Errors::new(url, &info);
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(t))
        .set_response_timeout(None);
    let backend = match &options.topology {
        Topology::Standalone => {
            let info = match certs {
                Some(certs) => redis::Client::build_with_tls(info, certs)
                    .map_err(|e| errors.url(e))?
                    .get_connection_info()
                    .clone(),
                None => info,
            };
            let manager = deadpool_redis::Manager::new_with_config(info, config)
                .map_err(|e| errors.url(e))?;
            pooled(Source::Url(manager), options, &errors)?
        }
        Topology::Sentinel {
            sentinels,
            master_name,
        } => {
            let client =
                sentinel_client(&info, sentinels, master_name, certs).map_err(|e| errors.url(e))?;
            pooled(
                Source::Sentinel(SentinelSource::new(client, config)),
                options,
                &errors,
            )?
        }
        Topology::Cluster { seeds } => {
            let mut nodes = vec![info.clone()];
            for seed in seeds {
                nodes.push(node_info(&info, seed, "cluster")?);
            }
            let mut builder = redis::cluster::ClusterClientBuilder::new(nodes)
                .connection_timeout(t)
                .response_timeout(t)
                .retries(3)
                .min_retry_wait(50)
                .max_retry_wait(500);
            if let Some(user) = info.redis_settings().username() {
                builder = builder.username(user);
            }
            if let Some(password) = info.redis_settings().password() {
                builder = builder.password(password);
            }
            if let Some(certs) = certs {
                builder = builder.certs(certs);
            }
            let client = builder.build().map_err(|e| errors.url(e))?;
            let cluster = tokio::time::timeout(t, client.get_async_connection())
                .await
                .map_err(|_| errors.timeout(t))?
                .map_err(|e| errors.connect(e))?;
            Backend::Cluster(conn::ClusterBackend::new(client, cluster))
        }
    };
    prepare(&backend, scripts, t, &errors).await?;
    let trace = options
        .trace_calls
        .then(|| conn::CallNames::new(&scripts.all(), &options.key_prefix));
    Ok(Conn::new(backend, t, trace))
}

fn pooled(
    source: Source,
    options: &RedisStoreOptions,
    errors: &Errors,
) -> Result<Backend, ConnectError> {
    conn::pool(source, options.pool_size, options.call_timeout)
        .map(Backend::Pool)
        .map_err(|e| errors.unreachable(e.to_string()))
}

/// A Sentinel client asking the URL's host and `sentinels` for
/// `master_name`; the URL's user, password, db and TLS apply to the data
/// nodes, TLS also to the sentinels.
fn sentinel_client(
    info: &ConnectionInfo,
    sentinels: &[String],
    master_name: &str,
    certs: Option<TlsCertificates>,
) -> Result<redis::sentinel::SentinelClient, RedisError> {
    let mut addrs = vec![info.addr().clone()];
    for s in sentinels {
        let node = node_info(info, s, "sentinel").map_err(|e| {
            RedisError::from((ErrorKind::InvalidClientConfig, "addrs", e.to_string()))
        })?;
        addrs.push(node.addr().clone());
    }
    let tls = matches!(info.addr(), ConnectionAddr::TcpTls { .. });
    let settings = info.redis_settings();
    let mut builder = redis::sentinel::SentinelClientBuilder::new(
        addrs,
        master_name,
        redis::sentinel::SentinelServerType::Master,
    )?
    .set_client_to_redis_db(settings.db());
    if let Some(user) = settings.username() {
        builder = builder.set_client_to_redis_username(user);
    }
    if let Some(password) = settings.password() {
        builder = builder.set_client_to_redis_password(password);
    }
    if tls {
        builder = builder
            .set_client_to_redis_tls_mode(TlsMode::Secure)
            .set_client_to_sentinel_tls_mode(TlsMode::Secure);
        if let Some(certs) = certs {
            builder = builder
                .set_client_to_redis_certificates(certs.clone())
                .set_client_to_sentinel_certificates(certs);
        }
    }
    builder.build()
}

/// A seed or sentinel: a URL, or `host:port` with the URL's scheme and
/// credentials.
fn node_info(
    base: &ConnectionInfo,
    node: &str,
    mode: &'static str,
) -> Result<ConnectionInfo, ConnectError> {
    let bad = |reason: String| ConnectError::Topology {
        field: "addrs",
        mode,
        reason,
    };
    if node.contains("://") {
        return node
            .into_connection_info()
            .map_err(|e| bad(format!("`{}`: {e}", crate::options::redact(node))));
    }
    let (host, port) = node
        .rsplit_once(':')
        .and_then(|(h, p)| Some((h, p.parse::<u16>().ok()?)))
        .filter(|(h, _)| !h.is_empty())
        .ok_or_else(|| bad(format!("`{node}` is not host:port or a redis:// URL")))?;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let addr = match base.addr() {
        ConnectionAddr::TcpTls { insecure, .. } => ConnectionAddr::TcpTls {
            host,
            port,
            insecure: *insecure,
            tls_params: None,
        },
        _ => ConnectionAddr::Tcp(host, port),
    };
    Ok(base.clone().set_addr(addr))
}

/// Checks the version on one primary and loads every script everywhere
/// (in a cluster `SCRIPT LOAD` goes to every node, replicas included, so a
/// promoted replica has them; NOSCRIPT is still healed per call).
async fn prepare(
    backend: &Backend,
    scripts: &Scripts,
    t: Duration,
    errors: &Errors,
) -> Result<(), ConnectError> {
    let info_cmd = redis::cmd("INFO").arg("server").clone();
    let mut handle = match backend {
        Backend::Pool(pool) => {
            let got = tokio::time::timeout(t, pool.get())
                .await
                .map_err(|_| errors.timeout(t))?;
            Handle::Pooled(got.map_err(|e| match e {
                deadpool::managed::PoolError::Backend(e) => errors.connect(e),
                other => errors.unreachable(other.to_string()),
            })?)
        }
        Backend::Cluster(c) => Handle::Cluster(c.connection()),
    };
    let info: redis::RedisResult<String> = match &mut handle {
        Handle::Cluster(c) => {
            let routed = c
                .route_command(
                    info_cmd,
                    RoutingInfo::SingleNode(SingleNodeRoutingInfo::RandomPrimary),
                )
                .await;
            routed.and_then(|v| redis::from_redis_value(v).map_err(RedisError::from))
        }
        Handle::Pooled(_) => tokio::time::timeout(t, info_cmd.query_async(&mut handle))
            .await
            .map_err(|_| errors.timeout(t))?,
    };
    let info = info.map_err(|e| errors.connect(e))?;
    check_version(&info).map_err(|detail| errors.scripts(detail))?;
    for (name, script) in scripts.all() {
        let invocation = script.prepare_invoke();
        tokio::time::timeout(t, invocation.load_async(&mut handle))
            .await
            .map_err(|_| errors.timeout(t))?
            .map_err(|e| match errors.connect(e) {
                ConnectError::Unreachable { detail, .. } => {
                    errors.scripts(format!("loading {name}: {detail}"))
                }
                other => other,
            })?;
    }
    Ok(())
}

/// Refuses servers without ZMSCORE (Redis < 6.2).
fn check_version(info: &str) -> Result<(), String> {
    let Some(version) = info.lines().find_map(|l| l.strip_prefix("redis_version:")) else {
        return Ok(());
    };
    let mut parts = version
        .trim()
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if (major, minor) < (6, 2) {
        return Err(format!("it runs Redis {version}, which lacks ZMSCORE"));
    }
    Ok(())
}

/// Builds connect errors for one URL: the user is named, the password never.
struct Errors {
    url: String,
    user: String,
    password: Option<String>,
}

impl Errors {
    fn new(url: &str, info: &ConnectionInfo) -> Self {
        let settings = info.redis_settings();
        Errors {
            url: url.to_owned(),
            user: settings.username().unwrap_or("default").to_owned(),
            password: settings
                .password()
                .filter(|p| !p.is_empty())
                .map(str::to_owned),
        }
    }

    /// `detail` without the password, should a message ever echo it.
    fn scrub(&self, detail: String) -> String {
        match &self.password {
            Some(p) => detail.replace(p.as_str(), "***"),
            None => detail,
        }
    }

    fn url(&self, e: RedisError) -> ConnectError {
        ConnectError::Url {
            url: self.url.clone(),
            reason: self.scrub(e.to_string()),
        }
    }

    fn unreachable(&self, detail: String) -> ConnectError {
        ConnectError::Unreachable {
            url: self.url.clone(),
            detail: self.scrub(detail),
        }
    }

    fn timeout(&self, t: Duration) -> ConnectError {
        self.unreachable(format!("no answer within {t:?}"))
    }

    fn scripts(&self, detail: String) -> ConnectError {
        ConnectError::Scripts {
            url: self.url.clone(),
            detail: self.scrub(detail),
        }
    }

    /// A failed connection: refused credentials, a failed TLS handshake, or
    /// an unreachable server.
    fn connect(&self, e: RedisError) -> ConnectError {
        let detail = self.scrub(e.to_string());
        let lower = detail.to_ascii_lowercase();
        if e.kind() == ErrorKind::AuthenticationFailed
            || matches!(e.code(), Some("WRONGPASS" | "NOAUTH" | "NOPERM"))
            || lower.contains("wrongpass")
            || lower.contains("invalid username-password")
        {
            return ConnectError::Auth {
                url: self.url.clone(),
                user: self.user.clone(),
                detail,
            };
        }
        if lower.contains("certificate") || lower.contains("handshake") || lower.contains("tls") {
            return ConnectError::Handshake {
                url: self.url.clone(),
                detail,
            };
        }
        ConnectError::Unreachable {
            url: self.url.clone(),
            detail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_before_6_2_are_refused_and_newer_ones_accepted() {
        assert!(check_version("redis_version:6.0.16\r\n").is_err());
        assert!(check_version("redis_version:6.2.0\r\n").is_ok());
        assert!(check_version("redis_version:7.0.15\r\n").is_ok());
    }

    #[test]
    fn seeds_take_the_urls_scheme_and_credentials() {
        let base = "rediss://u:p@h:1".into_connection_info().unwrap();
        let node = node_info(&base, "10.0.0.2:7001", "cluster").unwrap();
        assert!(
            matches!(node.addr(), ConnectionAddr::TcpTls { host, port: 7001, .. } if host == "10.0.0.2")
        );
        assert_eq!(node.redis_settings().username(), Some("u"));
        let err = node_info(&base, "nonsense", "cluster")
            .unwrap_err()
            .to_string();
        assert!(err.contains("addrs") && err.contains("host:port"), "{err}");
    }

    #[test]
    fn a_refused_password_names_the_user_and_never_the_password() {
        let info = "redis://alice:s3cret@h:1".into_connection_info().unwrap();
        let errors = Errors::new("redis://alice:***@h:1", &info);
        let e = RedisError::from((
            ErrorKind::AuthenticationFailed,
            "WRONGPASS",
            "invalid username-password pair (s3cret)".to_owned(),
        ));
        let msg = errors.connect(e).to_string();
        assert!(msg.contains("alice") && !msg.contains("s3cret"), "{msg}");
    }
}
