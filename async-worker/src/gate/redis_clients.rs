//! The Redis connections the `redis` and `redis-quota` gates share: one per distinct `address`, made on first use.
//!
//! Go's factory keeps one client per address for the whole process (db 0,
//! no auth or TLS, go-redis defaults), apart from the transport's own
//! connection. [`RedisClients`] is that map; it lives in [`GateEnv`] so
//! every gate built from one env shares it, and a clone is a handle to the
//! same map. Nothing connects when a gate is built: a Redis that is down at
//! startup must not stop the processor (Go dials lazily too), so the
//! connection is made by the first command and remade after a failure.
//!
//! [`GateEnv`]: super::GateEnv

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{ConnectionAddr, ErrorKind, RedisError};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// go-redis's default dial timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// go-redis's default read timeout.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(3);
/// go-redis's default retries, and its retry backoff bounds.
const RETRIES: usize = 3;
const RETRY_MIN_DELAY: Duration = Duration::from_millis(8);
const RETRY_MAX_DELAY: Duration = Duration::from_millis(512);

/// One shared connection per Redis `address` (`host:port`). Cheap to clone.
/// A connection belongs to the Tokio runtime that first used it, so one
/// registry serves one runtime (the processor has one).
#[derive(Clone, Default)]
pub struct RedisClients {
    managers: Arc<Mutex<HashMap<String, ConnectionManager>>>,
}

impl RedisClients {
    pub fn new() -> Self {
        RedisClients::default()
    }

    /// The connection for `address`, created (not yet connected) on first
    /// use. Must be called inside a Tokio runtime. Errors only when the
    /// address is not `host:port`.
    pub fn connection(&self, address: &str) -> Result<ConnectionManager, RedisError> {
        let mut managers = self.managers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(manager) = managers.get(address) {
            return Ok(manager.clone());
        }
        let client = redis::Client::open(tcp_address(address)?)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(RETRIES)
            .set_min_delay(RETRY_MIN_DELAY)
            .set_max_delay(RETRY_MAX_DELAY);
        let manager = ConnectionManager::new_lazy_with_config(client, config)?;
        managers.insert(address.to_owned(), manager.clone());
        Ok(manager)
    }

    /// How many distinct addresses have a connection.
    pub fn len(&self) -> usize {
        self.managers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for RedisClients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let managers = self.managers.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("RedisClients")
            .field("addresses", &managers.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// `host:port` (`[::1]:6379` for IPv6) as a plain TCP address: the param is
/// an address, not a URL, so credentials or a database in it are refused
/// rather than read.
fn tcp_address(address: &str) -> Result<ConnectionAddr, RedisError> {
    let refused = |why: &'static str| {
        RedisError::from((ErrorKind::InvalidClientConfig, why, address.to_owned()))
    };
    let (host, port) = address
        .rsplit_once(':')
        .ok_or_else(|| refused("missing port in address"))?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if host.is_empty() || host.contains(['/', '@']) {
        return Err(refused("invalid host in address"));
    }
    let port = port
        .parse()
        .map_err(|_| refused("invalid port in address"))?;
    Ok(ConnectionAddr::Tcp(host.to_owned(), port))
}

/// Test support for the Redis gates: a private `redis-server` on a free port.
#[cfg(test)]
pub(crate) mod testing {
    use crate::gate::{DispatchGate, GateError, GateRequest, Releases, Verdict};
    use claim_redis::testing::{RedisServer, RedisServerOptions, require_redis_server};
    use std::collections::BTreeMap;

    /// A private server, or `None` (after saying why) when `redis-server` is
    /// missing and `CI` is not set; with `CI` set a missing server fails.
    pub(crate) fn redis_server() -> Option<RedisServer> {
        if require_redis_server().is_none() {
            eprintln!("skipped: redis-server not on PATH (set CI to make this a failure)");
            return None;
        }
        Some(
            RedisServer::start(RedisServerOptions::default())
                .expect("start a private redis-server"),
        )
    }

    /// The server's `host:port`, as a gate's `address` param names it.
    pub(crate) fn address(server: &RedisServer) -> String {
        format!("127.0.0.1:{}", server.port())
    }

    /// A connection of the test's own, to set and inspect keys.
    pub(crate) async fn raw_connection(server: &RedisServer) -> redis::aio::MultiplexedConnection {
        redis::Client::open(server.url())
            .expect("redis client")
            .get_multiplexed_async_connection()
            .await
            .expect("connect to the test's redis-server")
    }

    /// What one apply did: its verdict, the request's labels after it (the
    /// request starts labelled `tier` = `batch`), and the releases it pushed.
    pub(crate) struct Applied {
        pub(crate) verdict: Verdict,
        pub(crate) labels: BTreeMap<String, String>,
        pub(crate) releases: Releases,
    }

    /// Applies `gate` to a request with this `metadata`.
    pub(crate) async fn apply_with(
        gate: &dyn DispatchGate,
        metadata: &[(&str, &str)],
    ) -> Result<Applied, GateError> {
        let metadata: BTreeMap<String, String> = metadata
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut labels = BTreeMap::from([("tier".to_owned(), "batch".to_owned())]);
        let mut releases = Releases::new();
        let mut request = GateRequest {
            id: "r1",
            metadata: &metadata,
            labels: &mut labels,
        };
        let verdict = gate.apply(&mut request, &mut releases).await?;
        Ok(Applied {
            verdict,
            labels,
            releases,
        })
    }

    /// `gate_params` from a JSON object literal.
    pub(crate) fn gate_params(value: serde_json::Value) -> crate::gate::GateParams {
        value
            .as_object()
            .cloned()
            .expect("gate_params is a JSON object")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_connection_is_shared_per_address_and_made_without_connecting() {
        let clients = RedisClients::new();
        let shared = clients.clone();
        // Nothing listens on port 1: creating the connection must not dial.
        clients.connection("127.0.0.1:1").unwrap();
        shared.connection("127.0.0.1:1").unwrap();
        assert_eq!(clients.len(), 1);
        shared.connection("localhost:1").unwrap();
        assert_eq!(clients.len(), 2);
    }

    #[test]
    fn an_address_must_be_host_and_port() {
        assert_eq!(
            tcp_address("[::1]:6379").unwrap(),
            ConnectionAddr::Tcp("::1".into(), 6379)
        );
        for bad in ["localhost", "host:x", ":6379", "user@host:1", "h/0:1"] {
            assert!(tcp_address(bad).is_err(), "{bad}");
        }
    }
}
