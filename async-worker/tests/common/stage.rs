//! What a process test stands on: a private redis-server, the stand-in gateway at a chosen latency, and a raw connection.

use async_worker::test_support::gateway::{GatewayBehaviour, StandInGateway};
use claim_redis::testing::RedisServer;
use redis::aio::MultiplexedConnection;
use std::time::Duration;

/// A gateway answering each call after a latency drawn from `min` to `max`.
pub fn latency_between(min: Duration, max: Duration) -> GatewayBehaviour {
    GatewayBehaviour {
        min_latency: min,
        max_latency: max,
        ..GatewayBehaviour::default()
    }
}

/// The stand-in gateway on a loopback port, answering as `behaviour` says.
pub async fn stand_in_gateway(behaviour: GatewayBehaviour) -> StandInGateway {
    StandInGateway::start(behaviour)
        .await
        .expect("start the stand-in gateway")
}

/// A private server, its URL, a stand-in gateway and a raw connection.
pub struct Stage {
    /// Kept for the test's length: dropping it stops the server.
    pub server: RedisServer,
    pub url: String,
    pub gateway: StandInGateway,
    pub conn: MultiplexedConnection,
}

impl Stage {
    /// A stage whose gateway answers every call after `latency`.
    pub async fn answering_after(latency: Duration) -> Option<Stage> {
        Stage::start(GatewayBehaviour::answering_after(latency)).await
    }

    /// A stage whose gateway answers as `behaviour` says; `None` when the
    /// test is skipped (see [`super::redis_server`]).
    pub async fn start(behaviour: GatewayBehaviour) -> Option<Stage> {
        let server = super::redis_server()?;
        let url = server.url();
        let gateway = stand_in_gateway(behaviour).await;
        let conn = super::connect(&url).await;
        Some(Stage {
            server,
            url,
            gateway,
            conn,
        })
    }
}
