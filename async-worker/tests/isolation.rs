//! Poison isolation in the runtime (memory store, paused time): a refused, failing or hanging store call never holds up other requests, queues or shutdown.

#[path = "common/faulty.rs"]
mod faulty;

use async_trait::async_trait;
use async_worker::{
    Handler, HandlerOutcome, OpenGate, QueueSpec, Request, RunReport, Runtime, RuntimeConfig,
    TokioClock,
};
use claim_core::store::{StoreConfig, Submission};
use claim_core::wire::{Envelope, ErrorCode};
use claim_core::{ClaimStore, Generation, Millis};
use claim_memory::MemoryStore;
use faulty::FaultyStore;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const A: &str = "queue-a";
const B: &str = "queue-b";
const RESULTS: &str = "results";
const POISON_LIST: &str = "poison-list";
const START: Millis = Millis(1_700_000_000_000);
const LEASE: Duration = Duration::from_secs(30);
const DRAIN: Duration = Duration::from_secs(10);

/// Answers every request at once, except `slow-*` (20 s) and `hang-*` (until stopped).
struct Answering;

#[async_trait]
impl Handler for Answering {
    async fn handle(&self, request: &Request, cancel: CancellationToken) -> HandlerOutcome {
        let id = request.generation.id.as_str();
        if id.starts_with("hang") {
            cancel.cancelled().await;
            return HandlerOutcome::error(ErrorCode::InferenceError, "stopped");
        }
        if id.starts_with("slow") {
            tokio::time::sleep(Duration::from_secs(20)).await;
        }
        HandlerOutcome::Success {
            status: 200,
            body: format!("answer to {id}"),
        }
    }
}

struct Setup {
    memory: MemoryStore,
    store: FaultyStore,
    clock: Arc<TokioClock>,
}

fn setup() -> Setup {
    let clock = Arc::new(TokioClock::starting_at(START));
    let config = StoreConfig {
        lease_ttl_ms: LEASE.as_millis() as u64,
        max_deliveries: 2,
        default_result_list: RESULTS.into(),
        ..StoreConfig::default()
    };
    let memory = MemoryStore::with_clock(config, clock.clone());
    Setup {
        store: FaultyStore::new(memory.clone()),
        memory,
        clock,
    }
}

/// A runtime over the faulty store draining `queues` (no result list override: members name theirs).
fn runtime(s: &Setup, queues: &[&str]) -> Runtime {
    let config = RuntimeConfig {
        queues: queues.iter().map(|q| QueueSpec::new(*q)).collect(),
        concurrency: 8,
        batch_size: 10,
        poll_interval: Duration::from_millis(100),
        reclaim_interval: Duration::from_secs(5),
        drain_timeout: DRAIN,
        default_result_list: RESULTS.into(),
        ..RuntimeConfig::default()
    };
    Runtime::with_clock(
        Arc::new(s.store.clone()),
        Arc::new(Answering),
        Arc::new(OpenGate),
        config,
        s.clock.clone(),
    )
}

/// Submits request `id` to `queue`, its record aimed at `list`.
async fn submit(s: &Setup, queue: &str, id: &str, list: &str) {
    let deadline = (START.0 / 1000) as i64 + 3600;
    let mut envelope = Envelope::new(id, format!("tok-{id}"), deadline, serde_json::json!({}));
    envelope.internal.result_queue_name = list.into();
    let submission = Submission {
        member: envelope.to_bytes().into(),
        generation: Generation::new(id, format!("tok-{id}")),
        deadline,
    };
    s.memory.submit(queue, &submission).await.unwrap();
}

/// The ids with a record in `list`, one entry per record.
async fn answered(s: &Setup, list: &str) -> Vec<String> {
    let mut ids: Vec<String> = s
        .memory
        .results(list)
        .await
        .unwrap()
        .iter()
        .map(|r| {
            let v: serde_json::Value = serde_json::from_slice(r.as_bytes()).unwrap();
            v["id"].as_str().unwrap().to_owned()
        })
        .collect();
    ids.sort();
    ids
}

fn ids(prefix: &str, n: usize) -> Vec<String> {
    let mut ids: Vec<String> = (0..n).map(|i| format!("{prefix}-{i:02}")).collect();
    ids.sort();
    ids
}

/// Polls (in paused time) until `done` holds, failing after `bound`.
async fn within(bound: Duration, what: &str, mut done: impl AsyncFnMut() -> bool) {
    let started = Instant::now();
    while !done().await {
        assert!(started.elapsed() < bound, "no {what} within {bound:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn start(rt: Runtime) -> (CancellationToken, JoinHandle<RunReport>) {
    let token = CancellationToken::new();
    let handle = tokio::spawn(rt.run(token.clone()));
    (token, handle)
}

/// Shuts down and asserts the run ends within the drain timeout plus 10 s.
async fn stop_within_bound(token: CancellationToken, handle: JoinHandle<RunReport>) -> RunReport {
    token.cancel();
    tokio::time::timeout(DRAIN + Duration::from_secs(10), handle)
        .await
        .expect("shutdown ends within the drain timeout plus 10 s")
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_request_whose_result_list_the_store_refuses_does_not_hold_up_the_others_and_ends_in_the_dead_set()
 {
    let s = setup();
    *s.store.faults.refuse_acks_to.lock().unwrap() = Some(POISON_LIST.into());
    submit(&s, A, "poison", POISON_LIST).await;
    for id in ids("ok", 30) {
        submit(&s, A, &id, RESULTS).await;
    }
    let (token, handle) = start(runtime(&s, &[A]));
    within(
        Duration::from_secs(2),
        "record for every ordinary request",
        async || answered(&s, RESULTS).await.len() == 30,
    )
    .await;
    assert_eq!(
        answered(&s, RESULTS).await,
        ids("ok", 30),
        "each answered once"
    );
    // Given up twice (once per delivery), its lease lapses each time; at
    // max_deliveries 2 the reclaimer ends it with DELIVERY_LIMIT and the dead set.
    within(
        LEASE * 3,
        "the poison request in the dead set",
        async || !s.memory.dead_entries(A).await.unwrap().is_empty(),
    )
    .await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!(
        report.given_up, 2,
        "refused alone once per delivery: {report:?}"
    );
    assert_eq!(report.records_pushed, 30);
    let depths = s.memory.depths(A).await.unwrap();
    assert_eq!(
        (depths.pending, depths.claimed),
        (0, 0),
        "nothing left: {depths:?}"
    );
    let dead = s.memory.dead_entries(A).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert!(dead[0].reason.contains("delivery"), "{:?}", dead[0].reason);
}

#[tokio::test(start_paused = true)]
async fn acks_of_one_queue_land_while_another_queues_acks_keep_failing_and_readiness_reports_it() {
    let s = setup();
    *s.store.faults.fail_acks_of_queue.lock().unwrap() = Some(A.into());
    for id in ids("a", 5) {
        submit(&s, A, &id, RESULTS).await;
    }
    let rt = runtime(&s, &[A, B]);
    let health = rt.health();
    let (token, handle) = start(rt);
    within(Duration::from_secs(1), "readiness", async || {
        health.is_ready()
    })
    .await;
    for id in ids("b", 20) {
        submit(&s, B, &id, RESULTS).await;
    }
    within(Duration::from_secs(2), "queue b's records", async || {
        answered(&s, RESULTS).await.len() == 20
    })
    .await;
    assert_eq!(answered(&s, RESULTS).await, ids("b", 20));
    assert!(
        health.is_ready(),
        "failing for less than a lease is not yet a reason"
    );
    within(LEASE + Duration::from_secs(5), "not ready", async || {
        !health.is_ready()
    })
    .await;
    let why = health.not_ready_because().unwrap();
    assert!(why.contains("failed to land"), "{why}");
    assert!(health.is_alive(), "liveness does not follow the store");

    *s.store.faults.fail_acks_of_queue.lock().unwrap() = None;
    within(Duration::from_secs(10), "queue a's records", async || {
        answered(&s, RESULTS).await.len() == 25
    })
    .await;
    within(Duration::from_secs(3), "ready again", async || {
        health.is_ready()
    })
    .await;
    let report = stop_within_bound(token, handle).await;
    assert_eq!((report.records_pushed, report.given_up), (25, 0));
}

#[tokio::test(start_paused = true)]
async fn an_out_of_memory_store_turns_readiness_off_until_it_recovers_and_nothing_is_lost() {
    let s = setup();
    s.store
        .faults
        .acks_out_of_memory
        .store(true, Ordering::SeqCst);
    let rt = runtime(&s, &[A]);
    let health = rt.health();
    let (token, handle) = start(rt);
    within(Duration::from_secs(1), "readiness", async || {
        health.is_ready()
    })
    .await;
    submit(&s, A, "ok-1", RESULTS).await;
    within(Duration::from_secs(3), "not ready", async || {
        !health.is_ready()
    })
    .await;
    let why = health.not_ready_because().unwrap();
    assert!(why.contains("out of memory"), "{why}");
    s.store
        .faults
        .acks_out_of_memory
        .store(false, Ordering::SeqCst);
    within(Duration::from_secs(10), "the record", async || {
        answered(&s, RESULTS).await.len() == 1
    })
    .await;
    within(Duration::from_secs(15), "ready again", async || {
        health.is_ready()
    })
    .await;
    stop_within_bound(token, handle).await;
}

#[tokio::test(start_paused = true)]
async fn shutdown_ends_within_the_bound_while_the_store_hangs_and_a_survivor_answers_everything_after_the_lease()
 {
    let s = setup();
    for id in ids("slow", 6) {
        submit(&s, A, &id, RESULTS).await;
    }
    let (token, handle) = start(runtime(&s, &[A]));
    within(Duration::from_secs(2), "claims", async || {
        s.memory.depths(A).await.unwrap().claimed == 6
    })
    .await;
    s.store.faults.hang.store(true, Ordering::SeqCst);
    let began = Instant::now();
    stop_within_bound(token, handle).await;
    eprintln!("shutdown with a hanging store took {:?}", began.elapsed());
    assert!(s.memory.results(RESULTS).await.unwrap().is_empty());
    assert_eq!(
        s.memory.depths(A).await.unwrap().claimed,
        6,
        "left claimed, not lost"
    );

    s.store.faults.hang.store(false, Ordering::SeqCst);
    let (token, handle) = start(runtime(&s, &[A]));
    within(LEASE * 2, "every record from the survivor", async || {
        answered(&s, RESULTS).await.len() == 6
    })
    .await;
    assert_eq!(answered(&s, RESULTS).await, ids("slow", 6));
    let report = stop_within_bound(token, handle).await;
    assert_eq!(report.redelivered, 6);
}

#[tokio::test(start_paused = true)]
async fn a_failed_hand_off_release_is_retried_and_the_claims_return_to_pending() {
    let s = setup();
    for id in ids("ok", 3) {
        submit(&s, A, &id, RESULTS).await;
    }
    let shutdown = CancellationToken::new();
    // Shutdown fires just as the claim lands: the consumer must hand the claims back.
    *s.store.faults.after_claim.lock().unwrap() = Some(shutdown.clone());
    s.store.faults.failing_releases.store(2, Ordering::SeqCst);
    let handle = tokio::spawn(runtime(&s, &[A]).run(shutdown));
    let report = tokio::time::timeout(DRAIN + Duration::from_secs(10), handle)
        .await
        .expect("shutdown ends within the bound")
        .unwrap();
    assert_eq!(
        report.released, 3,
        "released after two failed attempts: {report:?}"
    );
    assert_eq!(s.store.faults.failing_releases.load(Ordering::SeqCst), 0);
    let depths = s.memory.depths(A).await.unwrap();
    assert_eq!((depths.pending, depths.claimed), (3, 0), "{depths:?}");
    let claims = s.memory.claims(A).await.unwrap();
    assert!(claims.is_empty());
    assert_eq!(
        s.store.ack_calls.load(Ordering::SeqCst),
        0,
        "nothing was answered"
    );
}
