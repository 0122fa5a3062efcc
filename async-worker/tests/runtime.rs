//! The runtime on the memory store under tokio's paused time: every exit path ends in the right single outcome.

#[path = "common/faulty.rs"]
mod faulty;
#[path = "common/memory_rig.rs"]
mod rig;

use async_trait::async_trait;
use async_worker::{
    Handler, HandlerOutcome, QueueSpec, Request, Runtime, RuntimeConfig, TokioClock,
};
use claim_conformance::unreliable::{Fault, FaultRates, Op, UnreliableStore};
use claim_core::ListReads;
use claim_core::store::Submission;
use claim_core::wire::{Envelope, ErrorCode};
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, Generation};
use claim_memory::MemoryStore;
use rig::{START, start};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const Q: &str = "runtime-queue";
const RESULTS: &str = "runtime-results";

/// A handler whose behaviour the test chooses per request id prefix.
struct Scripted {
    calls: AtomicUsize,
}

#[async_trait]
impl Handler for Scripted {
    async fn handle(&self, request: &Request, cancel: CancellationToken) -> HandlerOutcome {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        let id = request.generation.id.as_str();
        if id.starts_with("flaky") && request.parsed.retry_count == 0 {
            return HandlerOutcome::Retry {
                after: Duration::from_secs(5),
                reason: format!("call {call} failed"),
            };
        }
        if id.starts_with("bad") {
            return HandlerOutcome::Error {
                code: ErrorCode::InferenceError,
                message: "no".into(),
                status: Some(400),
            };
        }
        // `hang-*`, `slow-*` and everything else as the isolation rig answers them.
        rig::Answering.handle(request, cancel).await
    }
}

struct Setup {
    store: MemoryStore,
    clock: Arc<TokioClock>,
}

fn setup() -> Setup {
    let (store, clock) = rig::paused_memory_routed(RESULTS, Q, None);
    Setup { store, clock }
}

fn runtime(s: &Setup, tweak: impl FnOnce(&mut RuntimeConfig)) -> Runtime {
    runtime_over(Arc::new(s.store.clone()), s, tweak)
}

fn runtime_over(
    store: Arc<dyn ClaimStore>,
    s: &Setup,
    tweak: impl FnOnce(&mut RuntimeConfig),
) -> Runtime {
    let spec = QueueSpec {
        result_queue_name: Some(RESULTS.into()),
        ..QueueSpec::new(Q)
    };
    let mut config = rig::runtime_config(vec![spec]);
    tweak(&mut config);
    let handler = Arc::new(Scripted {
        calls: AtomicUsize::new(0),
    });
    Runtime::builder(store)
        .handler(handler)
        .config(config)
        .clock(s.clock.clone())
        .build()
        .expect("valid runtime settings")
}

async fn submit(store: &MemoryStore, id: &str, deadline_in_secs: i64) {
    let deadline = (START.0 / 1000) as i64 + deadline_in_secs;
    let envelope = Envelope::new(
        id,
        format!("tok-{id}"),
        deadline,
        serde_json::json!({"prompt": id}),
    );
    let submission = Submission {
        member: envelope.to_bytes().into(),
        generation: Generation::new(id, format!("tok-{id}")),
        deadline,
        payload: None,
    };
    store.submit(Q, &submission).await.unwrap();
}

async fn records(store: &MemoryStore) -> Vec<serde_json::Value> {
    let raw = store.results(RESULTS).await.unwrap();
    raw.iter()
        .map(|r| serde_json::from_slice(r.as_bytes()).unwrap())
        .collect()
}

/// Polls (in paused time) until `done` holds, failing after a bound.
async fn until(what: &str, mut done: impl AsyncFnMut() -> bool) {
    for _ in 0..2_000 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// Waits (see [`until`]) until the queue holds `n` claims.
async fn claimed_until(s: &Setup, what: &str, n: usize) {
    until(what, async || s.store.depths(Q).await.unwrap().claimed == n).await;
}

/// A setup with request `id` submitted (deadline an hour out) and a
/// store over it that fails as `seed` and `rates` say.
async fn submitted_over_unreliable(
    id: &str,
    seed: u64,
    rates: FaultRates,
) -> (Setup, UnreliableStore<MemoryStore>) {
    let s = setup();
    submit(&s.store, id, 3600).await;
    let flaky = UnreliableStore::new(s.store.clone(), seed, rates);
    (s, flaky)
}

/// Asks the runtime to stop and waits for its report.
async fn finish(
    stop: CancellationToken,
    handle: tokio::task::JoinHandle<async_worker::RunReport>,
) -> async_worker::RunReport {
    stop.cancel();
    handle.await.unwrap()
}

#[tokio::test(start_paused = true)]
async fn every_request_gets_exactly_one_record_of_the_right_kind() {
    let s = setup();
    for id in ["ok-1", "ok-2", "flaky-1", "bad-1"] {
        submit(&s.store, id, 3600).await;
    }
    submit(&s.store, "late-1", -10).await;
    let (stop, handle) = start(runtime(&s, |_| {}));
    until("five records", async || records(&s.store).await.len() == 5).await;
    let report = finish(stop, handle).await;
    let recs = records(&s.store).await;
    let by_id = |id: &str| recs.iter().find(|r| r["id"] == id).cloned().unwrap();
    assert_eq!(by_id("ok-1")["status_code"], 200);
    assert_eq!(
        by_id("flaky-1")["payload"],
        "answer to flaky-1",
        "retried once, then answered"
    );
    assert_eq!(
        (
            by_id("bad-1")["status_code"].clone(),
            by_id("bad-1")["error_code"].clone()
        ),
        (400.into(), "INFERENCE_ERROR".into())
    );
    assert_eq!(by_id("late-1")["error_code"], "DEADLINE_EXCEEDED");
    assert_eq!(report.retries, 1);
    let d = s.store.depths(Q).await.unwrap();
    assert_eq!(
        (d.pending, d.claimed, s.store.retry_depth().await.unwrap()),
        (0, 0, 0)
    );
}

#[tokio::test(start_paused = true)]
async fn unparsable_members_go_to_the_dead_set_and_invalid_ones_get_a_record() {
    let s = setup();
    let garbage = Submission {
        member: "{nope".into(),
        generation: Generation::new("g", ""),
        deadline: (START.0 / 1000) as i64 + 60,
        payload: None,
    };
    s.store.submit(Q, &garbage).await.unwrap();
    let invalid = r#"{"request_kind":"redis","internal":{"request_token":"t"},"data":{"id":"inv","deadline":"soon","payload":{}}}"#;
    let invalid = Submission {
        member: invalid.into(),
        generation: Generation::new("inv", "t"),
        deadline: (START.0 / 1000) as i64 + 60,
        payload: None,
    };
    s.store.submit(Q, &invalid).await.unwrap();
    let (stop, handle) = start(runtime(&s, |_| {}));
    until("the invalid record", async || {
        records(&s.store).await.len() == 1
    })
    .await;
    finish(stop, handle).await;
    assert_eq!(records(&s.store).await[0]["error_code"], "INVALID_REQUEST");
    let dead = s.store.dead_entries(Q).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert!(
        dead[0].reason.contains("not a JSON object"),
        "{}",
        dead[0].reason
    );
}

#[tokio::test(start_paused = true)]
async fn a_request_cancelled_mid_flight_is_stopped_and_answered_cancelled() {
    let s = setup();
    submit(&s.store, "hang-1", 3600).await;
    let (stop, handle) = start(runtime(&s, |_| {}));
    claimed_until(&s, "the claim", 1).await;
    assert!(s.store.cancel("hang-1").await.unwrap());
    until("the cancelled record", async || {
        records(&s.store).await.len() == 1
    })
    .await;
    assert_eq!(records(&s.store).await[0]["error_code"], "CANCELLED");
    finish(stop, handle).await;
}

#[tokio::test(start_paused = true)]
async fn shutdown_sweeps_work_still_running_after_the_drain_back_to_pending() {
    let s = setup();
    submit(&s.store, "hang-1", 3600).await;
    submit(&s.store, "hang-2", 3600).await;
    let (stop, handle) = start(runtime(&s, |c| c.drain_timeout = Duration::from_secs(2)));
    claimed_until(&s, "two claims", 2).await;
    let report = finish(stop, handle).await;
    assert_eq!(report.swept, 2);
    let d = s.store.depths(Q).await.unwrap();
    assert_eq!(
        (d.pending, d.claimed),
        (2, 0),
        "nothing lost, nothing left claimed"
    );
    assert!(records(&s.store).await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn shutdown_waits_for_slow_work_within_the_drain_timeout() {
    let s = setup();
    submit(&s.store, "slow-1", 3600).await;
    let (stop, handle) = start(runtime(&s, |c| c.drain_timeout = Duration::from_secs(60)));
    claimed_until(&s, "the claim", 1).await;
    let report = finish(stop, handle).await;
    assert_eq!((report.swept, report.records_pushed), (0, 1));
    assert_eq!(records(&s.store).await[0]["payload"], "answer to slow-1");
}

#[tokio::test(start_paused = true)]
async fn a_crashed_runtimes_claims_are_redelivered_by_a_survivor_after_the_lease() {
    let s = setup();
    for i in 0..5 {
        submit(&s.store, &format!("hang-{i}"), 3600).await;
    }
    let (_crash_stop, crashed) = start(runtime(&s, |_| {}));
    claimed_until(&s, "five claims", 5).await;
    crashed.abort(); // a hard kill: no sweep, no acks, no heartbeats
    let _ = crashed.await;
    let (stop, handle) = start(runtime(&s, |_| {}));
    until("redelivery after the 30 s lease", async || {
        s.store.depths(Q).await.unwrap().claimed == 5
            && s.store
                .claims(Q)
                .await
                .unwrap()
                .iter()
                .all(|c| c.redeliveries == 1)
    })
    .await;
    let report = finish(stop, handle).await;
    assert_eq!(report.redelivered, 5);
    assert_eq!(
        report.swept, 5,
        "the survivor's own shutdown sweeps them back"
    );
}

#[tokio::test(start_paused = true)]
async fn work_whose_lease_ran_out_while_the_store_was_unreachable_is_stopped() {
    // Every renewal fails: the runtime cannot confirm its lease.
    let (s, flaky) = submitted_over_unreliable("hang-1", 7, FaultRates::new(1.0, 0.0)).await;
    flaky.set_only(Some(vec![Op::Renew]));
    let (stop, handle) = start(runtime_over(Arc::new(flaky), &s, |c| {
        c.reclaim_interval = Duration::from_secs(600);
    }));
    claimed_until(&s, "the claim", 1).await;
    tokio::time::sleep(Duration::from_secs(45)).await;
    let report = finish(stop, handle).await;
    assert_eq!(report.lease_lost, 1, "the lapsed work was stopped");
    assert_eq!(
        report.swept, 0,
        "a fenced claim is no longer this runtime's to sweep"
    );
    assert!(
        records(&s.store).await.is_empty(),
        "a fenced result is never offered to ack"
    );
}

#[tokio::test(start_paused = true)]
async fn a_claim_whose_outcome_is_unknown_is_released_and_run_at_once() {
    let (s, flaky) = submitted_over_unreliable("ok-1", 11, FaultRates::new(0.0, 0.0)).await;
    // The claim lands in the store, but the runtime sees an error.
    flaky.fail_next(Op::Claim, Fault::Indeterminate);
    let (stop, handle) = start(runtime_over(Arc::new(flaky), &s, |_| {}));
    let started = tokio::time::Instant::now();
    until("the record", async || records(&s.store).await.len() == 1).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "released and retried at once, not after the 30 s lease"
    );
    let report = finish(stop, handle).await;
    assert_eq!(records(&s.store).await[0]["payload"], "answer to ok-1");
    assert_eq!(
        (report.released, report.redelivered),
        (1, 0),
        "no delivery counted"
    );
}
