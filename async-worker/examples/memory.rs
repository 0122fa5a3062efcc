//! Plugging an application handler into the runtime on the in-process memory store.
//!
//! `cargo run -p async-worker --example memory`

use async_trait::async_trait;
use async_worker::{Handler, HandlerOutcome, OpenGate, QueueSpec, Request, Runtime, RuntimeConfig};
use claim_core::conformance::ListReads;
use claim_core::store::{StoreConfig, Submission};
use claim_core::wire::Envelope;
use claim_core::{ClaimProducer, Generation};
use claim_memory::MemoryStore;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio_util::sync::CancellationToken;

/// The application's code: here it upper-cases the prompt.
struct Shout;

#[async_trait]
impl Handler for Shout {
    async fn handle(&self, request: &Request, _cancel: CancellationToken) -> HandlerOutcome {
        let payload: serde_json::Value =
            serde_json::from_str(request.parsed.payload.get()).unwrap_or_default();
        let prompt = payload["prompt"]
            .as_str()
            .unwrap_or_default()
            .to_uppercase();
        HandlerOutcome::Success {
            status: 200,
            body: prompt,
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let store = Arc::new(MemoryStore::new(StoreConfig::default()));
    let config = RuntimeConfig {
        queues: vec![QueueSpec::new("example-queue")],
        poll_interval: Duration::from_millis(50),
        ..RuntimeConfig::default()
    };
    let runtime = Runtime::new(store.clone(), Arc::new(Shout), Arc::new(OpenGate), config);

    // Producer side, as the Go producer shapes requests.
    let deadline = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs() as i64 + 60;
    for (i, prompt) in ["hello", "claim", "lease", "ack"].into_iter().enumerate() {
        let (id, token) = (format!("req-{i}"), format!("token-{i}"));
        let member = Envelope::new(
            id.clone(),
            token.clone(),
            deadline,
            serde_json::json!({ "prompt": prompt }),
        );
        let submission = Submission {
            member: member.to_bytes().into(),
            generation: Generation::new(id, token),
            deadline,
            payload: None,
        };
        store.submit("example-queue", &submission).await?;
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
