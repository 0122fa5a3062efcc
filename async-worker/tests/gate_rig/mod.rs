//! The rig of the queue-gate and pool-gate tests: a gate the test switches while the runtime runs, a handler that notes each call and how many ran at once, the runtime over the memory rig, and the record and metric reads.
#![allow(dead_code)]

use crate::rig::{A, RESULTS, Setup, assert_pending_and_unclaimed, records_on, records_within};
use crate::rig::{runtime_config, setup, start, stop_within_bound, submit};
use async_trait::async_trait;
use async_worker::gate::factory;
use async_worker::gate::{
    GateEnv, GateError, GateOwner, GateRecord, GateRequest, Releases, Verdict,
};
use async_worker::{DispatchGate, QueueSpec, Runtime};
use async_worker::{PoolSpec, RuntimeBuilder};
use claim_core::{ClaimInspect, ClaimStore};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

mod one_request;
mod tracking;
// Only the pool-gate tests run one request this way.
#[allow(unused_imports)]
pub use one_request::*;
pub use tracking::*;

/// Go's 429 body a dropping gate may answer with; its spacing is kept so a
/// test can see the payload is written verbatim.
pub const TOO_MANY: &str = r#"{"error":  "Too Many Requests", "code": 429}"#;

/// A gate whose budget and answer the test changes while the runtime runs;
/// it notes how many requests each poll put to it.
#[derive(Debug)]
pub struct SwitchGate {
    setting: Mutex<Setting>,
    /// Applies per budget read (a queue gate's budget is read once a poll).
    polls: Mutex<Vec<usize>>,
    applies: AtomicUsize,
    /// The labels of each request put to it, in order.
    labels_seen: Mutex<Vec<BTreeMap<String, String>>>,
}

#[derive(Debug, Clone)]
struct Setting {
    budget: f64,
    answer: Result<Verdict, &'static str>,
}

impl SwitchGate {
    /// A gate with this budget answering `verdict`.
    pub fn new(budget: f64, verdict: Verdict) -> Arc<SwitchGate> {
        Arc::new(SwitchGate {
            setting: Mutex::new(Setting {
                budget,
                answer: Ok(verdict),
            }),
            polls: Mutex::default(),
            applies: AtomicUsize::new(0),
            labels_seen: Mutex::default(),
        })
    }

    /// A fully open gate that fails every request with `message`.
    pub fn failing(message: &'static str) -> Arc<SwitchGate> {
        let gate = SwitchGate::new(1.0, Verdict::Continue);
        gate.lock().answer = Err(message);
        gate
    }

    /// Fully open from now on: budget 1, every request continues.
    pub fn open(&self) {
        *self.lock() = Setting {
            budget: 1.0,
            answer: Ok(Verdict::Continue),
        };
    }

    /// Requests put to the gate so far.
    pub fn applies(&self) -> usize {
        self.applies.load(Ordering::SeqCst)
    }

    /// Budget reads so far (polls, for a queue gate).
    pub fn polls(&self) -> usize {
        self.polls.lock().unwrap().len()
    }

    /// How many requests each poll put to the gate, in poll order.
    pub fn applies_per_poll(&self) -> Vec<usize> {
        self.polls.lock().unwrap().clone()
    }

    /// The labels of each request put to the gate, in order.
    pub fn labels_seen(&self) -> Vec<BTreeMap<String, String>> {
        self.labels_seen.lock().unwrap().clone()
    }

    /// This gate as the runtime's builder takes it.
    pub fn shared(self: &Arc<Self>) -> Arc<dyn DispatchGate> {
        self.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Setting> {
        self.setting.lock().unwrap()
    }
}

#[async_trait]
impl DispatchGate for SwitchGate {
    async fn budget(&self) -> f64 {
        self.polls.lock().unwrap().push(0);
        self.lock().budget
    }

    async fn apply(
        &self,
        request: &mut GateRequest<'_>,
        _releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        self.applies.fetch_add(1, Ordering::SeqCst);
        self.labels_seen
            .lock()
            .unwrap()
            .push(request.labels.clone());
        if let Some(last) = self.polls.lock().unwrap().last_mut() {
            *last += 1;
        }
        let answer = self.lock().answer.clone();
        answer.map_err(|message| GateError::Failed(message.to_owned()))
    }
}

/// A `Drop` verdict answering with `payload`.
pub fn drop_with(payload: &str) -> Verdict {
    Verdict::Drop(Some(GateRecord {
        payload: payload.to_owned(),
    }))
}

/// A `local-max-concurrency` gate built by the factory, as a queue or pool
/// config with these params would build it.
pub fn local_max_concurrency(
    params: serde_json::Value,
    owner: &GateOwner,
) -> Arc<dyn DispatchGate> {
    let serde_json::Value::Object(params) = params else {
        unreachable!("gate_params are an object")
    };
    factory::build("local-max-concurrency", &params, owner, &GateEnv::default())
        .expect("valid local-max-concurrency params")
        .expect("a gate, not none")
}

/// A runtime over the rig's faulty store draining `queues` with the memory
/// rig's settings, answering with `handler`; gates and pools still to add.
pub fn builder(s: &Setup, handler: &Arc<Tracking>, queues: &[&str]) -> RuntimeBuilder {
    let specs = queues.iter().map(|q| QueueSpec::new(*q)).collect();
    specs_builder(s, handler, specs)
}

/// [`builder`] for whole queue specs.
pub fn specs_builder(s: &Setup, handler: &Arc<Tracking>, specs: Vec<QueueSpec>) -> RuntimeBuilder {
    Runtime::builder(Arc::new(s.store.clone()))
        .handler(handler.clone())
        .config(runtime_config(specs))
        .clock(s.clock.clone())
}

/// The spec of `queue` in pool `pool`.
pub fn in_pool(queue: &str, pool: &str) -> QueueSpec {
    QueueSpec {
        pool_name: pool.to_owned(),
        ..QueueSpec::new(queue)
    }
}

/// [`specs_builder`] with these pools.
pub fn pools_builder(
    s: &Setup,
    handler: &Arc<Tracking>,
    specs: Vec<QueueSpec>,
    pools: &[(&str, usize)],
) -> RuntimeBuilder {
    let builder = specs_builder(s, handler, specs);
    (pools.iter()).fold(builder, |b, (name, workers)| {
        b.pool(PoolSpec::new(*name, *workers))
    })
}

/// `(pending, claimed)` of `queue`.
pub async fn depths(s: &Setup, queue: &str) -> (usize, usize) {
    let depths = s.memory.depths(queue).await.unwrap();
    (depths.pending, depths.claimed)
}

/// The `retry_count` of every member waiting in `queue` or the retry set
/// (an absent count reads 0, as Go reads it).
pub async fn waiting_retry_counts(s: &Setup, queue: &str) -> Vec<u64> {
    let pending = s.memory.peek(queue, 0, 100).await.unwrap();
    let retrying = s.memory.retry_entries().await.unwrap();
    (pending.iter().chain(&retrying))
        .map(|entry| {
            let member: serde_json::Value =
                serde_json::from_slice(entry.member.as_bytes()).unwrap();
            member["internal"]["retry_count"].as_u64().unwrap_or(0)
        })
        .collect()
}

/// Claim calls the runtime made on the rig's store.
pub fn claim_calls(s: &Setup) -> usize {
    s.store.faults.claim_calls.load(Ordering::SeqCst)
}

/// Ack items the runtime offered the rig's store.
pub fn acks_offered(s: &Setup) -> usize {
    s.store.faults.acks.lock().unwrap().len()
}

pub use async_worker::test_support::sample;

/// Puts `gate` in front of queue [`A`] (before the claim).
pub fn as_queue_gate(b: RuntimeBuilder, gate: Arc<dyn DispatchGate>) -> RuntimeBuilder {
    b.queue_gate(A, gate)
}

/// Puts `gate` in front of the default pool's handler (after the claim).
pub fn as_pool_gate(b: RuntimeBuilder, gate: Arc<dyn DispatchGate>) -> RuntimeBuilder {
    b.pool_gate(async_worker::config::DEFAULT_POOL, gate)
}

/// Runs one request on [`A`] behind a gate (placed by `place`) that drops
/// it with `verdict`, and returns its one record; the handler is never
/// called and the queue is left empty.
pub async fn dropped_record(
    verdict: Verdict,
    place: fn(RuntimeBuilder, Arc<dyn DispatchGate>) -> RuntimeBuilder,
) -> serde_json::Value {
    let s = setup();
    submit(&s, A, "ok-1", RESULTS).await;
    let gate = SwitchGate::new(1.0, verdict);
    let handler = Tracking::holding(Duration::ZERO);
    let rt = place(builder(&s, &handler, &[A]), gate.shared());
    let (token, handle) = start(rt.build().expect("valid runtime settings"));
    records_within(&s, Duration::from_secs(5), "the drop's record", 1).await;
    let report = stop_within_bound(token, handle).await;
    assert!(
        handler.calls().is_empty(),
        "a dropped request is not handled"
    );
    assert_eq!(report.claimed, 1, "claimed to be answered");
    assert_pending_and_unclaimed(&s, A, 0).await;
    let mut records = records_on(&s.memory, RESULTS).await;
    assert_eq!(records.len(), 1, "{records:?}");
    records.remove(0)
}

/// Asserts `record` is request `ok-1`'s `GATE_DROPPED` record.
pub fn assert_gate_dropped(record: &serde_json::Value) {
    assert_eq!(record["id"], "ok-1");
    assert_eq!(record["error_code"], "GATE_DROPPED");
    assert_eq!(record["error_message"], "Pool gating dropped request");
    assert_eq!(
        record["payload"],
        r#"{"error":"Pool gating dropped request"}"#
    );
    assert_eq!(record["request_token"], "tok-ok-1");
}

/// Asserts `record` is request `ok-1`'s record of the gate's [`TOO_MANY`]
/// payload, as is, with no error.
pub fn assert_gate_payload(record: &serde_json::Value) {
    assert_eq!(record["id"], "ok-1");
    assert_eq!(record["payload"], TOO_MANY, "the gate's text as is");
    assert!(record.get("error_code").is_none(), "{record}");
    assert_eq!(record["request_token"], "tok-ok-1");
}

/// Checks both drops of a gate placed by `place`: without a record the
/// request is answered [`assert_gate_dropped`], with one its payload is
/// written as is ([`assert_gate_payload`]).
pub async fn assert_drops_answered(
    place: fn(RuntimeBuilder, Arc<dyn DispatchGate>) -> RuntimeBuilder,
) {
    assert_gate_dropped(&dropped_record(Verdict::Drop(None), place).await);
    assert_gate_payload(&dropped_record(drop_with(TOO_MANY), place).await);
}

/// The process-wide recorder, installed by the first test of a binary that
/// reads metrics, before its runtime registers its series (each such test
/// reads series of its own queue and pool only).
pub fn recorder() -> &'static metrics_exporter_prometheus::PrometheusHandle {
    static RECORDER: OnceLock<metrics_exporter_prometheus::PrometheusHandle> = OnceLock::new();
    RECORDER.get_or_init(|| async_worker::serve::install_recorder().expect("install the recorder"))
}
