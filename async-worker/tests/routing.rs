//! One routing for every record of a generation (memory store, paused time): the runtime's answers and the store's own `DELIVERY_LIMIT` records land on the list claim-core's `routing::route` picks.

#[path = "common/faulty.rs"]
mod faulty;
#[path = "common/memory_rig.rs"]
mod rig;

use async_worker::{QueueSpec, Runtime, TokioClock};
use claim_core::store::{ClaimRequest, StoreConfig, Submission};
use claim_core::wire::Envelope;
use claim_core::{ClaimProducer, ClaimStore, OwnerToken};
use claim_memory::MemoryStore;
use rig::{A, Answering, RESULTS, START, ids_on, runtime_config, start, stop_within_bound, within};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The list queue [`A`] configures.
const QUEUE_LIST: &str = "queue-a-results";

/// `id` as a producer that resolved its routing itself and named no list.
fn resolved_without_a_list(id: &str) -> Submission {
    let deadline = (START.0 / 1000) as i64 + 3600;
    let mut envelope = Envelope::new(id, format!("tok-{id}"), deadline, serde_json::json!({}));
    envelope.internal.result_queue_name = String::new();
    envelope.internal.result_routing_resolved = true;
    envelope.submission()
}

#[tokio::test(start_paused = true)]
async fn a_resolved_member_without_a_list_gets_its_delivery_limit_record_on_the_list_of_its_handler_answer()
 {
    let clock = Arc::new(TokioClock::starting_at(START));
    let config = StoreConfig {
        lease_ttl_ms: 30_000,
        max_deliveries: 1,
        default_result_list: RESULTS.into(),
        queue_result_lists: BTreeMap::from([(A.to_owned(), QUEUE_LIST.to_owned())]),
        ..StoreConfig::default()
    };
    let memory = MemoryStore::with_clock(config, clock.clone());
    // One generation a worker claimed and then died with; one the runtime answers.
    let crashed = resolved_without_a_list("crashed");
    memory.submit(A, &crashed).await.unwrap();
    let request = ClaimRequest {
        member: crashed.member.clone(),
        generation: crashed.generation.clone(),
    };
    let owner = OwnerToken::new("dead-worker");
    memory.claim(owner.on(A), &[request]).await.unwrap();
    memory
        .submit(A, &resolved_without_a_list("answered"))
        .await
        .unwrap();

    let spec = QueueSpec {
        result_queue_name: Some(QUEUE_LIST.to_owned()),
        ..QueueSpec::new(A)
    };
    let runtime = Runtime::builder(Arc::new(memory.clone()))
        .handler(Arc::new(Answering))
        .config(runtime_config(vec![spec]))
        .clock(clock.clone())
        .build()
        .expect("valid runtime settings");
    let (token, handle) = start(runtime);
    within(Duration::from_secs(120), "both records", async || {
        ids_on(&memory, RESULTS).await.len() + ids_on(&memory, QUEUE_LIST).await.len() == 2
    })
    .await;
    stop_within_bound(token, handle).await;
    assert_eq!(
        (
            ids_on(&memory, RESULTS).await,
            ids_on(&memory, QUEUE_LIST).await
        ),
        (vec!["answered".to_owned(), "crashed".to_owned()], vec![]),
        "the handler's answer and the DELIVERY_LIMIT record share one list"
    );
}
