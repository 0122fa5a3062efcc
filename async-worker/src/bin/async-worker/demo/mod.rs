//! `async-worker demo`: replicas drain a queue through a stand-in gateway while one is hard-stopped.
//!
//! On the memory store by default (replicas are tasks of this process); with
//! `--redis URL` the replicas are child processes of this binary and the
//! stopped one gets SIGKILL. Half the requests (`--payload-ref`) are
//! submitted by reference, as Go's producer does with `WithPayloadKeys`, and
//! a few of those (`--missing-payloads`) with no payload stored. Either way
//! it prints accepted, terminal records, duplicates suppressed, redelivered,
//! requests by reference and `PAYLOAD_UNAVAILABLE` records, lost, throughput
//! and latency, and succeeds only when nothing is lost, each request has
//! exactly one record (carrying its `request_token`), exactly the requests
//! without a payload ended `PAYLOAD_UNAVAILABLE`, and no payload key is left
//! for an answered request.

// The stand-in gateway, the scraper and the payload shapes are the library's `test_support`
// files, compiled in here too: the demo needs them in the default build,
// where the library does not offer them. Gateway behaviours only the tests
// and the chaos run use are unused here.
#[allow(dead_code)]
#[path = "../../../test_support/gateway.rs"]
mod gateway;
mod memory;
#[path = "../../../test_support/payload_shape.rs"]
mod payload_shape;
mod redis;
#[path = "../../../test_support/scrape.rs"]
mod scrape;
mod tally;

use crate::settings::{BareUnit, parse_flag_duration};
use async_worker::{QueueSpec, RuntimeConfig};
use claim_core::ListReads;
use claim_core::store::Submission;
use claim_core::wire::Envelope;
use claim_core::{ClaimProducer, ClaimStore};
use clap::Args;
use payload_shape::PayloadShape;
use std::time::{Duration, Instant};
use tally::{Tally, print_table};

/// The queue the demo fills.
pub const DEMO_QUEUE: &str = "demo-requests";
/// The result list the demo reads.
pub const DEMO_RESULTS: &str = "demo-results";

/// The demo's flags.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Run on this Redis, replicas as child processes killed with SIGKILL; default: the in-process memory store.
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,

    /// Requests to submit.
    #[arg(long, value_name = "N", default_value_t = 5000)]
    pub requests: usize,

    /// Worker replicas.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub replicas: usize,

    /// Hard-stop one replica once this fraction of the requests has a terminal record.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.3, value_parser = fraction)]
    pub kill_after: f64,

    /// Claim lease of the replicas: how soon the stopped replica's claims are redelivered [bare number = seconds].
    #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = lease)]
    pub claim_lease_ttl: Duration,

    /// Requests each replica handles at once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub concurrency: usize,

    /// Share of the requests submitted by reference, as Go's producer does with `WithPayloadKeys`: payload stored apart at `request-payload:<id>:<token>`, `"payload":null` in the member.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.5, value_parser = share)]
    pub payload_ref: f64,

    /// Of the requests submitted by reference, how many have no payload stored: each must end `PAYLOAD_UNAVAILABLE`.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub missing_payloads: usize,
}

fn share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err("expected a fraction from 0 to 1, such as 0.5".into()),
    }
}

fn fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..1.0).contains(&f) => Ok(f),
        _ => Err("expected a fraction from 0 up to (not including) 1, such as 0.3".into()),
    }
}

fn lease(s: &str) -> Result<Duration, String> {
    match parse_flag_duration(s, BareUnit::Seconds) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err("it is zero; give a positive duration such as 2s".into()),
        Err(e) => Err(format!("{e}; use Go syntax such as 2s or 1500ms")),
    }
}

/// Why a demo could not run to its verdict.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("demo I/O failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("demo store call failed: {0}")]
    Store(#[from] claim_core::StoreError),
    #[error("demo handler setup failed: {0}")]
    Handler(#[from] async_worker::http_handler::HttpHandlerError),
    #[error("a demo replica panicked: {0}")]
    Replica(#[from] tokio::task::JoinError),
    #[error("{0}")]
    Other(String),
}

/// Runs the demo; `Ok(true)` when the verdict is a pass.
pub async fn run(args: DemoArgs) -> Result<bool, DemoError> {
    match args.redis.clone() {
        None => memory::run(&args).await,
        Some(url) => redis::run(&args, &url).await,
    }
}

/// The shape of each of `requests` requests: a `share` of them by
/// reference and, of those, `missing` (at most all of them) without a
/// stored payload, each kind spread evenly over the run.
pub fn payload_shapes(requests: usize, share: f64, missing: usize) -> Vec<PayloadShape> {
    let step = |i: usize| ((i + 1) as f64 * share).floor() > (i as f64 * share).floor();
    let refs = (0..requests).filter(|i| step(*i)).count();
    let missing = missing.min(refs);
    let mut j = 0;
    (0..requests)
        .map(|i| {
            if !step(i) {
                return PayloadShape::Inline;
            }
            j += 1;
            // The j-th reference (1-based) is missing when j·missing/refs steps up.
            if j * missing / refs > (j - 1) * missing / refs {
                PayloadShape::Missing
            } else {
                PayloadShape::ByReference
            }
        })
        .collect()
}

/// Request `i` as the Go producer would shape it, its payload as `shape`
/// says; the submission and its id.
pub fn envelope(i: usize, deadline: i64, shape: PayloadShape) -> (Submission, String) {
    let id = format!("demo-{i:06}");
    let token = format!("{:032x}", rand::random::<u128>());
    let payload =
        serde_json::json!({"model": "demo", "prompt": format!("request {i}"), "max_tokens": 1});
    let envelope = Envelope::new(id.clone(), token, deadline, payload);
    (shape.submission(envelope), id)
}

/// Enqueues the demo's requests (see [`envelope`]) to `queue` as the Go
/// producer does (enqueue sequence, payloads stored apart for the share
/// `--payload-ref` asks), due at `deadline` (see [`demo_deadline`]), and says so (`to` names the
/// store, `replicas` what a replica is); a tally that knows each one's
/// submission time and payload key.
pub async fn submit_requests(
    store: &impl ClaimProducer,
    queue: &str,
    args: &DemoArgs,
    deadline: i64,
    (to, replicas): (&str, &str),
) -> Result<Tally, DemoError> {
    let mut tally = Tally::default();
    let shapes = payload_shapes(args.requests, args.payload_ref, args.missing_payloads);
    for (i, shape) in shapes.iter().enumerate() {
        let (submission, id) = envelope(i, deadline, *shape);
        store.enqueue(queue, &submission).await?;
        if *shape != PayloadShape::Inline {
            let stored = *shape == PayloadShape::ByReference;
            tally.by_reference(&id, submission.payload_key(), stored);
        }
        tally.submitted(id, Instant::now());
    }
    let (n, r) = (args.requests, args.replicas);
    let (refs, missing) = tally.references();
    println!(
        "submitted {n} requests to {to} ({refs} by reference, {missing} of them with no payload stored); starting {r} {replicas}"
    );
    Ok(tally)
}

/// The deadline of the demo's requests: ten minutes from now, in whole
/// seconds (one `request-seq:<queue>:<deadline>` counter numbers them).
pub fn demo_deadline() -> i64 {
    async_worker::clock::unix_now() + 600
}

/// The end of a run: counts the records of `list` after the first
/// `seen`, looks up the payload keys of answered requests (each must be
/// gone: deleted by the owner's ack, or never written) and prints the
/// closing table, `extra` rows among its figures; true when nothing was
/// lost, each request has one record and its payload ended as it must.
pub async fn conclude(
    store: &(impl ClaimStore + ListReads),
    (list, seen): (&str, usize),
    mut tally: Tally,
    extra: [(&str, String); 3],
    title: String,
    elapsed: Duration,
) -> Result<bool, DemoError> {
    count_new_records(store, list, seen, &mut tally).await?;
    let mut summary = tally.summary();
    for chunk in tally.answered_refs().chunks(500) {
        let found = store.fetch_payloads(chunk).await?;
        summary.payload_keys_left += found.iter().filter(|p| p.is_some()).count();
    }
    print_table(&title, &summary, &extra, elapsed);
    Ok(summary.passed() && summary.payload_failures().is_empty())
}

/// Counts in `tally` the records of `list` after the first `seen` (the ones
/// counted before); how many records the list holds now.
pub async fn count_new_records(
    store: &impl ListReads,
    list: &str,
    seen: usize,
    tally: &mut Tally,
) -> Result<usize, DemoError> {
    let records = store.results(list).await?;
    let now = Instant::now();
    for record in &records[seen..] {
        tally.record(record.as_bytes(), now);
    }
    Ok(records.len())
}

/// A replica's runtime settings: short intervals so a stopped replica's
/// claims come back within seconds.
pub fn replica_config(args: &DemoArgs) -> RuntimeConfig {
    RuntimeConfig {
        queues: vec![QueueSpec {
            result_queue_name: Some(DEMO_RESULTS.into()),
            ..QueueSpec::new(DEMO_QUEUE)
        }],
        concurrency: args.concurrency,
        batch_size: 50,
        poll_interval: Duration::from_millis(20),
        reclaim_interval: Duration::from_millis(500),
        promote_interval: Duration::from_millis(200),
        drain_timeout: Duration::from_secs(10),
        ..RuntimeConfig::default()
    }
}
