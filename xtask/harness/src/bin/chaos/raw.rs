//! The run's own connections to Redis, beside the store's: one that reconnects after any error and follows the topology (a server, a cluster, the primary the sentinels name), and the replica check behind an accepted submit.
//!
//! The producer counts a submit as accepted only once a replica holds it
//! ([`Raw::on_replica`]): on the primary of each slot the submit wrote, a
//! fence key is written and `WAIT 1` sent on the same connection. Replicas
//! apply a primary's writes in order, so one that has the fence has the
//! submit, which that primary answered before. Without it a failover could
//! drop a submit the old primary had acknowledged and not yet sent on:
//! a real loss, which no redelivery repairs. (Should the slot move to
//! another node between the submit's answer and the fence, the fence lands
//! on the promoted replica; the promotion only happens after the old
//! primary died, within the same sub-millisecond window the check closes,
//! so the run accepts that residue and says so in the docs.)

use redis::aio::MultiplexedConnection;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use redis::{ConnectionAddr, RedisResult};
use std::collections::HashSet;
use std::time::Duration;

/// How long one `WAIT` for a replica blocks at most.
const WAIT_MS: u64 = 500;

/// Where the run's own connections go.
#[derive(Debug, Clone)]
pub enum Target {
    /// One server (standalone).
    Server(String),
    /// A cluster, found through these `host:port` seeds.
    Cluster(Vec<String>),
    /// The primary these `host:port` sentinels name for the master name.
    Sentinel {
        sentinels: Vec<String>,
        master_name: String,
    },
}

enum Conn {
    Single(MultiplexedConnection),
    Cluster(ClusterConnection),
}

/// A connection that follows [`Target`] and reconnects on the next call after any error.
pub struct Raw {
    target: Target,
    conn: Option<Conn>,
}

impl std::fmt::Debug for Raw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Raw").field("target", &self.target).finish()
    }
}

fn config() -> redis::AsyncConnectionConfig {
    redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(Some(Duration::from_secs(5)))
}

fn addr(host_port: &str) -> RedisResult<ConnectionAddr> {
    let bad = || {
        redis::RedisError::from((
            redis::ErrorKind::InvalidClientConfig,
            "expected host:port",
            host_port.to_owned(),
        ))
    };
    let (host, port) = host_port.rsplit_once(':').ok_or_else(bad)?;
    let port = port.parse().map_err(|_| bad())?;
    Ok(ConnectionAddr::Tcp(host.to_owned(), port))
}

impl Raw {
    pub fn new(target: &Target) -> Raw {
        Raw {
            target: target.clone(),
            conn: None,
        }
    }

    async fn connect(&self) -> RedisResult<Conn> {
        match &self.target {
            Target::Server(url) => {
                let client = redis::Client::open(url.as_str())?;
                let conn = client
                    .get_multiplexed_async_connection_with_config(&config())
                    .await?;
                Ok(Conn::Single(conn))
            }
            Target::Cluster(seeds) => {
                let nodes: Vec<String> = seeds.iter().map(|s| format!("redis://{s}")).collect();
                let client = redis::cluster::ClusterClientBuilder::new(nodes)
                    .connection_timeout(Duration::from_secs(2))
                    .response_timeout(Duration::from_secs(5))
                    .retries(3)
                    .build()?;
                Ok(Conn::Cluster(client.get_async_connection().await?))
            }
            Target::Sentinel {
                sentinels,
                master_name,
            } => {
                let addrs = sentinels
                    .iter()
                    .map(|s| addr(s))
                    .collect::<RedisResult<Vec<_>>>()?;
                let mut sentinel = redis::sentinel::SentinelClientBuilder::new(
                    addrs,
                    master_name,
                    redis::sentinel::SentinelServerType::Master,
                )?
                .build()?;
                let client = sentinel.async_get_client().await?;
                let conn = client
                    .get_multiplexed_async_connection_with_config(&config())
                    .await?;
                Ok(Conn::Single(conn))
            }
        }
    }

    async fn conn(&mut self) -> RedisResult<&mut Conn> {
        if self.conn.is_none() {
            self.conn = Some(self.connect().await?);
        }
        Ok(self.conn.as_mut().expect("connected above"))
    }

    /// Drops the connection after an error: the next call connects anew
    /// (after a failover, to the promoted primary).
    fn keep_if_ok<T>(&mut self, answer: &RedisResult<T>) {
        if answer.is_err() {
            self.conn = None;
        }
    }

    pub async fn query<T: redis::FromRedisValue>(&mut self, cmd: &redis::Cmd) -> RedisResult<T> {
        let answer = match self.conn().await? {
            Conn::Single(c) => cmd.query_async(c).await,
            Conn::Cluster(c) => cmd.query_async(c).await,
        };
        self.keep_if_ok(&answer);
        answer
    }

    /// A pipeline; in a cluster every key of it must lie in one slot.
    pub async fn pipe<T: redis::FromRedisValue>(
        &mut self,
        pipe: &redis::Pipeline,
    ) -> RedisResult<T> {
        let answer = match self.conn().await? {
            Conn::Single(c) => pipe.query_async(c).await,
            Conn::Cluster(c) => pipe.query_async(c).await,
        };
        self.keep_if_ok(&answer);
        answer
    }

    /// Whether a replica of the primary of each of `keys`' slots holds
    /// everything that primary had answered before this call (see the
    /// module docs): true only when every `WAIT 1` reached one.
    pub async fn on_replica(&mut self, keys: &[String]) -> RedisResult<bool> {
        let answer = match self.conn().await? {
            Conn::Single(c) => fence_and_wait(c, "chaos-fence").await,
            Conn::Cluster(c) => {
                let mut slots = HashSet::new();
                let mut all = Ok(true);
                for key in keys {
                    if !slots.insert(redis::cluster_routing::Slot::for_key(key.as_bytes())) {
                        continue;
                    }
                    // `{<key>}` hashes as `<key>` does (the run's keys hold no braces).
                    let fence = format!("chaos-fence:{{{key}}}");
                    match fence_and_wait_in_cluster(c, &fence).await {
                        Ok(true) => {}
                        other => {
                            all = other;
                            break;
                        }
                    }
                }
                all
            }
        };
        self.keep_if_ok(&answer);
        answer
    }
}

async fn fence_and_wait(conn: &mut MultiplexedConnection, fence: &str) -> RedisResult<bool> {
    let mut pipe = redis::pipe();
    pipe.cmd("SET")
        .arg(fence)
        .arg(1)
        .arg("PX")
        .arg(60_000)
        .ignore()
        .cmd("WAIT")
        .arg(1)
        .arg(WAIT_MS);
    let (reached,): (i64,) = pipe.query_async(conn).await?;
    Ok(reached >= 1)
}

/// The fence and its `WAIT`, both to the primary of the fence's slot: the
/// cluster client keeps one connection per node, so the `WAIT` covers the fence.
async fn fence_and_wait_in_cluster(conn: &mut ClusterConnection, fence: &str) -> RedisResult<bool> {
    let set = redis::cmd("SET")
        .arg(fence)
        .arg(1)
        .arg("PX")
        .arg(60_000)
        .to_owned();
    let () = set.query_async(conn).await?;
    let mut wait = redis::cmd("WAIT");
    wait.arg(1).arg(WAIT_MS);
    let route = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(Route::with_key(
        fence,
        SlotAddr::Master,
    )));
    let reached: i64 = redis::from_redis_value(conn.route_command(wait, route).await?)?;
    Ok(reached >= 1)
}
