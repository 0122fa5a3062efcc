//! New connections under Sentinel: ask the sentinels for the current primary of the master name, connect there, and check an idle connection still reaches a primary.
//!
//! After a failover the old primary's connections break (it died) or
//! answer READONLY (it came back as a replica); `settle` drops such a
//! connection, and the next one created here reaches whatever primary the
//! sentinels name now. Until they have promoted a replica, creating a
//! connection fails: a transient `Failed`.

use deadpool::managed::{RecycleError, RecycleResult};
use redis::aio::MultiplexedConnection;
use redis::sentinel::SentinelClient;
use redis::{AsyncConnectionConfig, FromRedisValue, RedisError};
use tokio::sync::Mutex;

pub(crate) struct SentinelSource {
    /// redis-rs's client keeps one connection per sentinel and needs `&mut`.
    client: Mutex<SentinelClient>,
    config: AsyncConnectionConfig,
}

impl SentinelSource {
    pub(crate) fn new(client: SentinelClient, config: AsyncConnectionConfig) -> Self {
        SentinelSource {
            client: Mutex::new(client),
            config,
        }
    }

    /// A connection to the primary the sentinels name now.
    pub(crate) async fn connect(&self) -> Result<MultiplexedConnection, RedisError> {
        let client = self.client.lock().await.async_get_client().await?;
        client
            .get_multiplexed_async_connection_with_config(&self.config)
            .await
    }

    /// An idle connection is kept only while its server still is a primary.
    pub(crate) async fn check(
        &self,
        conn: &mut MultiplexedConnection,
    ) -> RecycleResult<RedisError> {
        // ROLE's first element is the role's name.
        let role: Vec<redis::Value> = redis::cmd("ROLE").query_async(conn).await?;
        match role.first().map(String::from_redis_value_ref) {
            Some(Ok(name)) if name == "master" => Ok(()),
            _ => Err(RecycleError::message("no longer the primary")),
        }
    }
}
