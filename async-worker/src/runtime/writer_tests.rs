//! Tests of the result writer's own loop: what it delivers after shutdown closes its channel.

use super::{Settlement, run};
use crate::runtime::Runtime;
use crate::runtime::settlement::{Claimed, terminal};
use crate::{Handler, HandlerOutcome, QueueSpec, Request, RuntimeConfig};
use claim_core::ClaimInspect;
use claim_core::ListReads;
use claim_core::store::{ClaimOutcome, ClaimRequest, StoreConfig, Submission};
use claim_core::wire::ResultRecord;
use claim_core::{ClaimProducer, ClaimStore, Generation, Member};
use claim_memory::MemoryStore;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const Q: &str = "writer-q";
const LIST: &str = "writer-results";

#[derive(Debug)]
struct Unused;

#[async_trait::async_trait]
impl Handler for Unused {
    async fn handle(&self, _: &Request, _: CancellationToken) -> HandlerOutcome {
        unreachable!("the writer test hands results to the writer directly")
    }
}

/// Claims `n` fresh requests as `owner` and returns what a worker would hand the writer.
async fn claimed(store: &MemoryStore, runtime: &Runtime, n: usize) -> Vec<Settlement> {
    let queue: Arc<str> = Q.into();
    // Far from any clock reading: the claim's lease is capped by it.
    let deadline = 4_000_000_000;
    let mut out = Vec::new();
    for i in 0..n {
        let id = format!("w-{i}");
        let generation = Generation::new(&id, format!("tok-{i}"));
        let member = Member::from(
            serde_json::json!({
                "internal": {"request_token": generation.token},
                "request_kind": "plain",
                "data": {"id": id, "created": 0, "deadline": deadline, "payload": {}},
            })
            .to_string()
            .into_bytes(),
        );
        let submission = Submission {
            member: member.clone(),
            generation: generation.clone(),
            deadline,
            payload: None,
        };
        store.submit(Q, &submission).await.unwrap();
        let request = ClaimRequest {
            member: member.clone(),
            generation: generation.clone(),
        };
        let outcome = store
            .claim(runtime.owner().on(Q), &[request])
            .await
            .unwrap();
        let ClaimOutcome::Claimed { score, .. } = outcome[0] else {
            panic!("a fresh member is claimed: {outcome:?}");
        };
        let record = ResultRecord::success(&id, 200, "done");
        let claimed = Claimed {
            generation,
            member,
            score,
            payload_ref: None,
        };
        out.push(terminal(&queue, claimed, LIST.into(), record, "OK"));
    }
    out
}

#[tokio::test]
async fn settlements_queued_when_shutdown_closes_the_channel_are_still_acked_and_the_writer_ends() {
    let store = Arc::new(MemoryStore::new(StoreConfig::default()));
    let config = RuntimeConfig {
        queues: vec![QueueSpec::new(Q)],
        ..RuntimeConfig::default()
    };
    let runtime = Runtime::builder(store.clone())
        .handler(Arc::new(Unused))
        .config(config)
        .build()
        .expect("valid runtime settings");
    let settlements = claimed(&store, &runtime, 5).await;
    let Runtime { shared, receiver } = runtime;
    for settlement in settlements {
        shared.settlements.send(settlement).await.unwrap();
    }
    // Shutdown fires before the writer has received anything: the five
    // sit in the closed channel and must still be delivered.
    let stop = CancellationToken::new();
    stop.cancel();
    let writer = tokio::spawn(run(shared.clone(), receiver, stop));
    let ended = tokio::time::timeout(Duration::from_secs(10), writer).await;
    assert!(
        matches!(ended, Ok(Ok(()))),
        "the writer ends cleanly: {ended:?}"
    );
    assert_eq!(store.results(LIST).await.unwrap().len(), 5);
    assert_eq!(store.depths(Q).await.unwrap().claimed, 0);
}
