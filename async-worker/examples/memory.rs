//! A typed handler on the in-process memory store: the prelude, the builder and `handler_fn`.
//!
//! `cargo run -p async-worker --example memory`

use async_worker::prelude::*;
use std::time::Duration;

/// What a producer asks for.
#[derive(serde::Deserialize)]
struct Shout {
    prompt: String,
}

/// What the application answers: serialized into the success record.
#[derive(serde::Serialize)]
struct Shouted {
    loud: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let store = MemoryStore::new(StoreConfig::default());
    let runtime = Runtime::builder(store.clone())
        .queue("example-queue")
        .poll_interval(Duration::from_millis(50))
        .handler(handler_fn(|job: Shout, _cx: JobContext| async move {
            Ok::<_, std::convert::Infallible>(Shouted {
                loud: job.prompt.to_uppercase(),
            })
        }))
        .build()?;

    // Producer side: each job pushed as the Go producer enqueues it.
    let deadline = unix_now() + 60;
    for (i, prompt) in ["hello", "claim", "lease", "ack"].into_iter().enumerate() {
        let job = serde_json::json!({ "prompt": prompt });
        store
            .push("example-queue", &format!("req-{i}"), job, deadline)
            .await?;
    }

    let stop = CancellationToken::new();
    let running = tokio::spawn(runtime.run(stop.clone()));
    while store.results("result-list").await?.len() < 4 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.cancel();
    let report = running.await?;
    for record in store.results("result-list").await? {
        println!("{}", String::from_utf8_lossy(record.as_bytes()));
    }
    println!("{report:?}");
    Ok(())
}
