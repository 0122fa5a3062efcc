//! The producer: paced submissions in the Go producer's format, some by reference (a few with no payload stored), some resubmissions of an id with a new token, some cancels.
//!
//! `store.submit` is the Go producer's MULTI (DEL `request-cancel:<id>`, SET
//! `request-active:<id>`, ZADD) and `store.cancel` its cancel. A call that
//! fails (Redis restarting) is repeated until it succeeds: both are
//! idempotent, and a repeated submit of a generation that already has its
//! record is dropped by the next claim. A generation is accepted once its
//! submit returned OK and, in a cluster or Sentinel run, a replica of every
//! primary it wrote to holds it ([`crate::raw::Raw::on_replica`]; until
//! then the submit is repeated): a failover may then undo claims and acks,
//! which only redeliver, but no accepted submit. Every accepted generation
//! must get exactly one record.
//! A submission by reference stores its payload in the same atomic step
//! (`request-payload:<id>:<token>`, the member with `"payload":null`);
//! one with its payload deliberately missing stores none.

use crate::raw::{Raw, Target};
use crate::{QUEUE, RESULTS};
use async_worker::test_support::payload_shape::PayloadShape;
use claim_core::store::Submission;
use claim_core::wire::Envelope;
use claim_core::{ClaimProducer, Generation, StoreError};
use claim_redis::RedisStore;
use futures::TryStreamExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long one producer call may keep failing before the run gives up.
const CALL_BOUND: Duration = Duration::from_secs(60);
/// Producer calls in flight at once.
const CONCURRENT_CALLS: usize = 8;

/// What the producer submitted.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Request tokens (generations) per id, in submission order.
    pub generations: HashMap<String, Vec<String>>,
    pub accepted: usize,
    pub resubmissions: usize,
    pub cancels: usize,
    /// Cancels that found an active generation to mark.
    pub cancels_marked: usize,
    /// Producer calls that failed and were repeated.
    pub failed_calls: usize,
    /// Submits repeated because no replica confirmed them (cluster, Sentinel).
    pub unreplicated: usize,
    /// Generations submitted by reference, with whether their payload was
    /// stored (false: deliberately missing).
    pub refs: HashMap<Generation, bool>,
}

/// One submission the producer will make, and the cancel that follows it.
struct Step {
    due: Duration,
    id: String,
    token: String,
    resubmit: bool,
    cancel: Option<String>,
    shape: PayloadShape,
}

/// Decides every submission and cancel up front, from the producer's seed.
fn steps(plan: &crate::plan::Plan) -> Vec<Step> {
    let mut rng = StdRng::seed_from_u64(plan.producer_seed);
    // Shapes from a generator of their own, so a seed picks the same ids,
    // resubmissions and cancels whatever the payload shares.
    let mut shapes = StdRng::seed_from_u64(plan.producer_seed ^ 0x5041_594c_4f41_4453);
    let mut ids: Vec<String> = Vec::with_capacity(plan.requests);
    let mut steps = Vec::with_capacity(plan.requests);
    for i in 0..plan.requests {
        let resubmit = ids.len() > 50 && rng.random_bool(plan.resubmit_fraction);
        let id = if resubmit {
            // A recent id: its earlier generation may still be pending or in flight.
            ids[rng.random_range(ids.len().saturating_sub(500)..ids.len())].clone()
        } else {
            ids.push(format!("chaos-{:06}", ids.len()));
            ids[ids.len() - 1].clone()
        };
        // Half the cancels chase the request just submitted (often still
        // pending or in flight), half a recent one (often answered already).
        let cancel = rng.random_bool(plan.cancel_fraction).then(|| {
            if rng.random_bool(0.5) {
                id.clone()
            } else {
                ids[rng.random_range(ids.len().saturating_sub(100)..ids.len())].clone()
            }
        });
        let shape = if !shapes.random_bool(plan.payload_ref) {
            PayloadShape::Inline
        } else if shapes.random_bool(plan.missing_payloads) {
            PayloadShape::Missing
        } else {
            PayloadShape::ByReference
        };
        steps.push(Step {
            due: Duration::from_secs_f64(i as f64 / plan.rate),
            token: format!("{:016x}", rng.random::<u64>()),
            id,
            resubmit,
            cancel,
            shape,
        });
    }
    steps
}

/// Submits the plan's generations at its rate from `start`, a few calls at
/// a time so one slow call does not hold the pace back.
pub async fn run(
    store: RedisStore,
    ledger: Arc<Mutex<Ledger>>,
    plan: crate::plan::Plan,
    start: Instant,
    replicas: Option<Target>,
) -> Result<(), String> {
    // One connection per call in flight: a `WAIT` blocks its connection.
    let witnesses: Vec<tokio::sync::Mutex<Raw>> = replicas
        .iter()
        .flat_map(|t| (0..CONCURRENT_CALLS).map(|_| tokio::sync::Mutex::new(Raw::new(t))))
        .collect();
    let (store, ledger, witnesses) = (&store, &ledger, &witnesses);
    futures::stream::iter(steps(&plan).into_iter().enumerate().map(Ok))
        .try_for_each_concurrent(CONCURRENT_CALLS, |(i, step)| async move {
            tokio::time::sleep_until((start + step.due).into()).await;
            let submission = submission(&step.id, &step.token, step.shape);
            let witness = witnesses.get(i % CONCURRENT_CALLS);
            let (failed, unreplicated) = accept(store, &submission, witness).await?;
            {
                let mut l = ledger.lock().expect("ledger lock");
                if step.shape != PayloadShape::Inline {
                    let stored = step.shape == PayloadShape::ByReference;
                    l.refs.insert(submission.generation.clone(), stored);
                }
                l.generations.entry(step.id).or_default().push(step.token);
                l.accepted += 1;
                l.resubmissions += usize::from(step.resubmit);
                l.failed_calls += failed;
                l.unreplicated += unreplicated;
            }
            if let Some(victim) = step.cancel {
                let (marked, failed) = until_ok("cancel", || store.cancel(&victim)).await?;
                let mut l = ledger.lock().expect("ledger lock");
                l.cancels += 1;
                l.cancels_marked += usize::from(marked);
                l.failed_calls += failed;
            }
            Ok::<(), String>(())
        })
        .await
}

/// Submits until the submit succeeded and, with a `witness`, a replica
/// holds it (bounded); how many calls failed, and how many successful
/// submits no replica confirmed.
async fn accept(
    store: &RedisStore,
    submission: &Submission,
    witness: Option<&tokio::sync::Mutex<Raw>>,
) -> Result<(usize, usize), String> {
    let started = Instant::now();
    let (mut failed, mut unreplicated) = (0, 0);
    loop {
        let ((), f) = until_ok("submit", || store.submit(QUEUE, submission)).await?;
        failed += f;
        let Some(witness) = witness else {
            return Ok((failed, unreplicated));
        };
        let keys = written_keys(store, submission);
        if let Ok(true) = witness.lock().await.on_replica(&keys).await {
            return Ok((failed, unreplicated));
        }
        unreplicated += 1;
        if started.elapsed() > CALL_BOUND {
            return Err(format!(
                "no replica confirmed the submit of {} within {CALL_BOUND:?}",
                submission.generation.id
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The keys a submit writes: the producer's per-request keys (each in a
/// slot of its own in a cluster) and the queue.
fn written_keys(store: &RedisStore, s: &Submission) -> Vec<String> {
    let keys = store.keys();
    let id = &s.generation.id;
    let mut written = vec![keys.queue(QUEUE).pending, keys.cancel(id), keys.active(id)];
    if s.payload.is_some() {
        written.push(keys.payload(&s.payload_key()));
    }
    written
}

/// A member as the Go producer writes it, naming this run's queue and
/// result list, its payload carried as `shape` says.
fn submission(id: &str, token: &str, shape: PayloadShape) -> Submission {
    let deadline = async_worker::clock::unix_now() + 600;
    let payload =
        serde_json::json!({"model": "chaos", "prompt": format!("request {id}"), "max_tokens": 1});
    let mut envelope = Envelope::new(id, token, deadline, payload);
    envelope.internal.request_queue_name = QUEUE.into();
    envelope.internal.result_queue_name = RESULTS.into();
    shape.submission(envelope)
}

/// Repeats `call` until it succeeds (polling, bounded); the answer and how many calls failed.
pub async fn until_ok<T, F, Fut>(what: &str, call: F) -> Result<(T, usize), String>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, StoreError>>,
{
    let started = Instant::now();
    let mut failed = 0;
    loop {
        match call().await {
            Ok(answer) => return Ok((answer, failed)),
            Err(e) if started.elapsed() > CALL_BOUND => {
                return Err(format!("{what} kept failing for {CALL_BOUND:?}: {e}"));
            }
            Err(_) => {
                failed += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}
