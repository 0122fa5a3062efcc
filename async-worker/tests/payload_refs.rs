//! The runtime on the memory store with payloads stored apart, under tokio's paused time: one fetch per claim call and never for work that ends without a handler, `PAYLOAD_UNAVAILABLE` for a missing payload, a failed fetch released, retries parking the envelope only, and Go's result routing in every ack.

use async_trait::async_trait;
use async_worker::{Handler, HandlerOutcome, QueueSpec, Request, RunReport, Runtime};
use claim_core::ListReads;
use claim_core::store::Submission;
use claim_core::wire::{self, Envelope, ResultRecord};
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

#[path = "common/faulty.rs"]
mod faulty;
#[path = "common/memory_rig.rs"]
mod rig;

use rig::{A, RESULTS, START, Setup, start};

/// The list the routed tests' producer names (the queue is the rig's [`A`], its list [`RESULTS`]).
const ROUTED: &str = "routed-results";

/// Echoes the payload it was given; `retry-*` asks for a retry on its first attempt.
struct Echo;

#[async_trait]
impl Handler for Echo {
    async fn handle(&self, request: &Request, _cancel: CancellationToken) -> HandlerOutcome {
        if request.generation.id.starts_with("retry") && request.parsed.retry_count == 0 {
            return HandlerOutcome::Retry {
                after: Duration::from_secs(5),
                reason: "try later".into(),
            };
        }
        HandlerOutcome::Success {
            status: 200,
            body: request.parsed.payload.get().to_owned(),
        }
    }
}

fn setup() -> Setup {
    setup_with_ttl(None)
}

/// A store routing `A`'s records to `RESULTS` with list TTL `ttl`.
fn setup_with_ttl(ttl: Option<u64>) -> Setup {
    let (memory, clock) = rig::paused_memory_routed(RESULTS, A, ttl);
    Setup::over(memory, clock)
}

fn runtime(s: &Setup, spec: QueueSpec) -> Runtime {
    let store: Arc<dyn ClaimStore> = Arc::new(s.store.clone());
    Runtime::builder(store)
        .handler(Arc::new(Echo))
        .config(rig::runtime_config(vec![spec]))
        .clock(s.clock.clone())
        .build()
        .expect("valid runtime settings")
}

async fn finish(stop: CancellationToken, handle: JoinHandle<RunReport>) -> RunReport {
    stop.cancel();
    handle.await.unwrap()
}

fn token(id: &str) -> String {
    format!("tok-{id}")
}

fn envelope(id: &str, deadline_in_secs: i64) -> Envelope {
    let deadline = (START.0 / 1000) as i64 + deadline_in_secs;
    let payload = serde_json::json!({"model": "m", "prompt": format!("<{id}>")});
    Envelope::new(id, token(id), deadline, payload)
}

/// How a test submits one request.
#[derive(Clone, Copy, PartialEq)]
enum Payload {
    Inline,
    Apart,
    /// Stored apart, but the key was never written (or expired).
    Missing,
}

/// Submits `envelope` as Go's producer would; returns the payload ref (if
/// stored apart) and the payload bytes the handler should see.
async fn submit(s: &Setup, envelope: Envelope, how: Payload) -> (Option<String>, Vec<u8>) {
    let inline = inline_payload(&envelope);
    let submission = match how {
        Payload::Inline => envelope.submission(),
        Payload::Apart => envelope.submission_by_reference(),
        Payload::Missing => Submission {
            payload: None,
            ..envelope.submission_by_reference()
        },
    };
    let payload_ref = Some(submission.payload_key()).filter(|_| how != Payload::Inline);
    let expected = submission
        .payload
        .as_ref()
        .map_or(inline, |p| p.as_bytes().to_vec());
    s.memory.submit(A, &submission).await.unwrap();
    (payload_ref, expected)
}

/// Polls (in paused time) until `done` holds, failing after 200 s.
async fn until(what: &str, done: impl AsyncFnMut() -> bool) {
    rig::within(Duration::from_secs(200), what, done).await;
}

/// The records in `list`, by request id; fails on a second record for an id.
async fn records(s: &Setup, list: &str) -> BTreeMap<String, ResultRecord> {
    let mut out = BTreeMap::new();
    for raw in s.memory.results(list).await.unwrap() {
        let record = ResultRecord::from_json(raw.as_bytes()).expect("a Go-readable record");
        let id = record.id.clone();
        assert!(
            out.insert(id.clone(), record).is_none(),
            "two records for {id}"
        );
    }
    out
}

/// Whether the store still holds a payload at each of `refs`.
async fn stored(s: &Setup, refs: &[String]) -> Vec<bool> {
    let fetched = s.memory.fetch_payloads(refs).await.unwrap();
    fetched.iter().map(Option::is_some).collect()
}

fn spec() -> QueueSpec {
    QueueSpec {
        result_queue_name: Some(RESULTS.into()),
        ..QueueSpec::new(A)
    }
}

#[tokio::test(start_paused = true)]
async fn payloads_stored_apart_reach_the_handler_in_one_fetch_per_claim_call_and_a_missing_one_ends_payload_unavailable()
 {
    let s = setup();
    let mut expected = BTreeMap::new();
    let mut refs = Vec::new();
    for (id, how) in [
        ("apart-1", Payload::Apart),
        ("apart-2", Payload::Apart),
        ("apart-3", Payload::Apart),
        ("inline-1", Payload::Inline),
        ("gone-1", Payload::Missing),
    ] {
        let (payload_ref, payload) = submit(&s, envelope(id, 3600), how).await;
        refs.extend(payload_ref);
        expected.insert(id.to_owned(), (how, payload));
    }
    let (stop, handle) = start(runtime(&s, spec()));
    until("five records", async || {
        records(&s, RESULTS).await.len() == 5
    })
    .await;
    let report = finish(stop, handle).await;

    let records = records(&s, RESULTS).await;
    for (id, (how, payload)) in &expected {
        let record = &records[id];
        assert_eq!(record.request_token, Some(token(id)), "{id}");
        if *how == Payload::Missing {
            assert_eq!(record.error_code, Some(wire::ErrorCode::PayloadUnavailable));
            assert_eq!(
                record.error_message.as_deref(),
                Some("request payload is missing")
            );
        } else {
            assert_eq!(record.status_code, Some(200), "{id}");
            assert_eq!(
                record.payload.as_bytes(),
                payload,
                "{id}: the handler's payload"
            );
        }
    }
    let fetches = s.store.faults.fetches.lock().unwrap().clone();
    let claim_calls = s.store.faults.claim_calls.load(Ordering::SeqCst);
    assert!(
        !fetches.is_empty() && fetches.len() <= claim_calls,
        "{} fetches for {claim_calls} claim calls",
        fetches.len()
    );
    let mut fetched: Vec<String> = fetches.concat();
    fetched.sort();
    assert_eq!(
        fetched, refs,
        "each ref fetched once, no inline member fetched"
    );
    assert_eq!(report.redelivered, 0);
    for item in s.store.faults.acks.lock().unwrap().iter() {
        let apart = expected[&item.generation.id].0 != Payload::Inline;
        assert_eq!(item.payload_ref.is_some(), apart, "{}", item.generation);
    }
    assert_eq!(
        stored(&s, &refs).await,
        vec![false; refs.len()],
        "the owner's acks deleted every payload key"
    );
}

#[tokio::test(start_paused = true)]
async fn work_that_ends_without_a_handler_never_fetches_its_payload_and_its_ack_deletes_the_key() {
    let s = setup();
    let (late_ref, _) = submit(&s, envelope("late", 1), Payload::Apart).await;
    let (cancelled_ref, _) = submit(&s, envelope("cancelled", 3600), Payload::Apart).await;
    assert!(s.memory.cancel("cancelled").await.unwrap());
    tokio::time::advance(Duration::from_secs(3)).await;
    let (stop, handle) = start(runtime(&s, spec()));
    until("two records", async || {
        records(&s, RESULTS).await.len() == 2
    })
    .await;
    finish(stop, handle).await;

    let records = records(&s, RESULTS).await;
    assert_eq!(
        records["late"].error_code,
        Some(wire::ErrorCode::DeadlineExceeded)
    );
    assert_eq!(
        records["cancelled"].error_code,
        Some(wire::ErrorCode::Cancelled)
    );
    assert!(
        s.store.faults.fetches.lock().unwrap().is_empty(),
        "nothing was fetched"
    );
    let refs = [late_ref.unwrap(), cancelled_ref.unwrap()];
    assert_eq!(stored(&s, &refs).await, [false, false]);
}

#[tokio::test(start_paused = true)]
async fn a_failed_fetch_releases_its_claims_and_a_later_poll_answers_each_request_once() {
    let s = setup();
    s.store.faults.failing_fetches.store(2, Ordering::SeqCst);
    let mut refs = Vec::new();
    for i in 0..5 {
        let (payload_ref, _) = submit(&s, envelope(&format!("r-{i}"), 3600), Payload::Apart).await;
        refs.extend(payload_ref);
    }
    let (stop, handle) = start(runtime(&s, spec()));
    until("five records", async || {
        records(&s, RESULTS).await.len() == 5
    })
    .await;
    let report = finish(stop, handle).await;

    assert!(
        records(&s, RESULTS)
            .await
            .values()
            .all(|r| r.status_code == Some(200)),
        "every request answered by the handler"
    );
    assert_eq!(
        s.store.faults.fetches.lock().unwrap().len(),
        3,
        "two failures, then one fetch"
    );
    assert_eq!(
        report.released, 10,
        "each failed fetch released its five claims"
    );
    assert_eq!(report.redelivered, 0, "a release is not a delivery");
    assert_eq!(stored(&s, &refs).await, vec![false; 5]);
}

#[tokio::test(start_paused = true)]
async fn a_retry_parks_the_envelope_only_and_the_payload_key_stays_until_the_answer() {
    let s = setup();
    let (payload_ref, payload) = submit(&s, envelope("retry-1", 3600), Payload::Apart).await;
    let payload_ref = payload_ref.unwrap();
    let (stop, handle) = start(runtime(&s, spec()));
    until("the parked retry", async || {
        s.memory.retry_depth().await.unwrap() == 1
    })
    .await;
    let parked = s.memory.retry_entries().await.unwrap();
    let member = wire::parse_member(parked[0].member.as_bytes()).expect("parses");
    assert_eq!(member.payload.get(), "null", "the envelope only");
    assert_eq!(member.payload_ref.as_deref(), Some(payload_ref.as_str()));
    assert_eq!(member.retry_count, 1);
    assert_eq!(stored(&s, std::slice::from_ref(&payload_ref)).await, [true]);

    until("the answer", async || records(&s, RESULTS).await.len() == 1).await;
    let report = finish(stop, handle).await;
    let record = &records(&s, RESULTS).await["retry-1"];
    assert_eq!(
        record.payload.as_bytes(),
        payload,
        "fetched again after the retry"
    );
    assert_eq!(report.retries, 1);
    assert_eq!(stored(&s, &[payload_ref]).await, [false]);
}

#[tokio::test(start_paused = true)]
async fn acks_carry_the_routed_list_and_ttl_and_every_record_names_its_token() {
    let s = setup_with_ttl(Some(120));
    let resolved = |id: &str, ttl: i64| {
        let mut e = envelope(id, 3600);
        e.internal.result_queue_name = ROUTED.into();
        e.internal.result_ttl_seconds = ttl;
        e.internal.result_routing_resolved = true;
        e
    };
    let mut unresolved = envelope("unresolved", 3600);
    unresolved.internal.result_queue_name = ROUTED.into();
    unresolved.internal.result_ttl_seconds = 999;
    submit(&s, unresolved, Payload::Apart).await;
    submit(&s, resolved("resolved-ttl", 30), Payload::Apart).await;
    submit(&s, resolved("resolved-no-ttl", 0), Payload::Inline).await;
    let spec = QueueSpec {
        result_queue_name: Some(RESULTS.into()),
        result_ttl_seconds: Some(120),
        ..QueueSpec::new(A)
    };
    let (stop, handle) = start(runtime(&s, spec));
    until("three records", async || {
        records(&s, RESULTS).await.len() + records(&s, ROUTED).await.len() == 3
    })
    .await;
    finish(stop, handle).await;

    let acks = s.store.faults.acks.lock().unwrap().clone();
    let routing: BTreeMap<String, (String, u64)> = acks
        .iter()
        .map(|a| {
            let target = (a.result_list.clone(), a.result_ttl_seconds);
            (a.generation.id.clone(), target)
        })
        .collect();
    let expect = |list: &str, ttl| (list.to_owned(), ttl);
    assert_eq!(
        routing["unresolved"],
        expect(RESULTS, 120),
        "the config wins"
    );
    assert_eq!(routing["resolved-ttl"], expect(ROUTED, 30));
    assert_eq!(routing["resolved-no-ttl"], expect(ROUTED, 0));
    assert_eq!(s.memory.list_ttl(RESULTS).await.unwrap(), Some(120));
    assert_eq!(
        s.memory.list_ttl(ROUTED).await.unwrap(),
        Some(30),
        "a push without a TTL leaves the list's expiry alone"
    );
    for (list, ids) in [
        (RESULTS, vec!["unresolved"]),
        (ROUTED, vec!["resolved-no-ttl", "resolved-ttl"]),
    ] {
        let records = records(&s, list).await;
        assert_eq!(records.keys().collect::<Vec<_>>(), ids);
        for (id, record) in records {
            assert_eq!(record.request_token, Some(token(&id)));
        }
    }
}

/// The payload bytes of an inline member, as Go's producer wrote them.
fn inline_payload(envelope: &Envelope) -> Vec<u8> {
    let member = wire::parse_member(&envelope.to_bytes()).expect("a Go member");
    member.payload.get().as_bytes().to_vec()
}
