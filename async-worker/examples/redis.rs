//! The same typed handler on Redis: the production store, shared by any number of replicas.
//!
//! `cargo run -p async-worker --example redis -- redis://127.0.0.1:6379/0`
//! drains `request-sortedset` into `result-list` until Ctrl-C.

use async_worker::prelude::*;

/// Any JSON payload, echoed back into the success record.
type Echo = serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "redis://127.0.0.1:6379/0".into());
    let store = RedisStore::connect(RedisStoreOptions::new(url, StoreConfig::default())).await?;
    for problem in store.check_durability().await?.problems() {
        eprintln!("warning: {problem}");
    }
    let runtime = Runtime::builder(store)
        .queue("request-sortedset")
        .handler(handler_fn(|job: Echo, _cx: JobContext| async move {
            Ok::<_, std::convert::Infallible>(job)
        }))
        .build()?;
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
