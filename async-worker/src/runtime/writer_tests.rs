//! Tests of the result writer's own loop (what it delivers after shutdown closes its channel) and of how a worker hands it a settlement.

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

/// A runtime of `config` over a fresh memory store.
fn runtime_on_memory(config: RuntimeConfig) -> (Arc<MemoryStore>, Runtime) {
    let store = Arc::new(MemoryStore::new(StoreConfig::default()));
    let runtime = Runtime::builder(store.clone())
        .handler(Arc::new(Unused))
        .config(config)
        .build()
        .expect("valid runtime settings");
    (store, runtime)
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
    let (store, runtime) = runtime_on_memory(RuntimeConfig {
        queues: vec![QueueSpec::new(Q)],
        ..RuntimeConfig::default()
    });
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

#[tokio::test(start_paused = true)]
async fn a_settlement_is_handed_over_at_once_with_room_waits_while_the_channel_is_full_and_none_is_sent_once_abandoned()
 {
    // One worker, acks of one: the channel holds two settlements.
    let (store, runtime) = runtime_on_memory(RuntimeConfig {
        queues: vec![QueueSpec::new(Q)],
        concurrency: 1,
        ack_batch_size: 1,
        ..RuntimeConfig::default()
    });
    let mut settlements = claimed(&store, &runtime, 4).await.into_iter();
    let Runtime {
        shared,
        mut receiver,
    } = runtime;
    for _ in 0..2 {
        shared.send_to_writer(settlements.next().unwrap()).await;
    }
    assert_eq!(
        receiver.len(),
        2,
        "with room, each is in the channel once sent"
    );

    let third = shared.send_to_writer(settlements.next().unwrap());
    tokio::pin!(third);
    let waited = tokio::time::timeout(Duration::from_secs(5), &mut third).await;
    assert!(waited.is_err(), "a full channel's send waits for room");
    assert!(receiver.recv().await.is_some());
    third.await;
    assert_eq!(
        receiver.len(),
        2,
        "the waiting one went in once there was room"
    );

    shared.abandon.cancel();
    shared.send_to_writer(settlements.next().unwrap()).await;
    assert_eq!(
        receiver.len(),
        2,
        "past shutdown's bound nothing more is handed over: the sweep returns the claim"
    );
}
