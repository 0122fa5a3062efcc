//! The same handler on Redis: the production store, shared by any number of replicas.
//!
//! `cargo run -p async-worker --example redis -- redis://127.0.0.1:6379/0`
//! drains `request-sortedset` into `result-list` until Ctrl-C.

use async_trait::async_trait;
use async_worker::{Handler, HandlerOutcome, OpenGate, Request, Runtime, RuntimeConfig};
use claim_core::store::StoreConfig;
use claim_redis::{RedisStore, RedisStoreOptions};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

struct Echo;

#[async_trait]
impl Handler for Echo {
    async fn handle(&self, request: &Request, _cancel: CancellationToken) -> HandlerOutcome {
        HandlerOutcome::Success {
            status: 200,
            body: request.parsed.payload.get().to_owned(),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "redis://127.0.0.1:6379/0".into());
    let store = RedisStore::connect(RedisStoreOptions::new(url, StoreConfig::default())).await?;
    for problem in store.check_durability().await?.problems() {
        eprintln!("warning: {problem}");
    }
    let runtime = Runtime::new(
        Arc::new(store),
        Arc::new(Echo),
        Arc::new(OpenGate),
        RuntimeConfig::default(),
    );
    let stop = CancellationToken::new();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        on_signal.cancel();
    });
    let report = runtime.run(stop).await;
    println!("{report:?}");
    Ok(())
}
