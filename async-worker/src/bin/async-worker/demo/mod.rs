//! `async-worker demo`: replicas drain a queue through a stand-in gateway while one is hard-stopped.
//!
//! On the memory store by default (replicas are tasks of this process); with
//! `--redis URL` the replicas are child processes of this binary and the
//! stopped one gets SIGKILL. Either way it prints accepted, terminal records,
//! duplicates suppressed, redelivered, lost, throughput and latency, and
//! succeeds only when nothing is lost and each request has exactly one record.

// The stand-in gateway and the scraper are the library's `test_support`
// files, compiled in here too: the demo needs them in the default build,
// where the library does not offer them. Gateway behaviours only the tests
// and the chaos run use are unused here.
#[allow(dead_code)]
#[path = "../../../test_support/gateway.rs"]
mod gateway;
mod memory;
mod redis;
#[path = "../../../test_support/scrape.rs"]
mod scrape;
mod tally;

use async_worker::settings::DemoArgs;
use async_worker::{QueueSpec, RuntimeConfig};
use claim_core::store::Submission;
use claim_core::wire::Envelope;
use claim_core::{ClaimInspect, ClaimStore, Generation};
use std::time::{Duration, Instant};
use tally::Tally;

/// The queue the demo fills.
pub const DEMO_QUEUE: &str = "demo-requests";
/// The result list the demo reads.
pub const DEMO_RESULTS: &str = "demo-results";

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

/// Request `i` as the Go producer would shape it.
pub fn envelope(i: usize, deadline: i64) -> (Submission, String) {
    let id = format!("demo-{i:06}");
    let token = format!("{:016x}", rand::random::<u64>());
    let payload =
        serde_json::json!({"model": "demo", "prompt": format!("request {i}"), "max_tokens": 1});
    let member = Envelope::new(id.clone(), token.clone(), deadline, payload).to_bytes();
    let submission = Submission {
        member: member.into(),
        generation: Generation::new(id.clone(), token),
        deadline,
        payload: None,
    };
    (submission, id)
}

/// Submits the demo's requests (see [`envelope`]) to `queue`, due in ten
/// minutes, and says so (`to` names the store, `replicas` what a replica
/// is); a tally that knows each one's submission time.
pub async fn submit_requests(
    store: &impl ClaimStore,
    queue: &str,
    args: &DemoArgs,
    (to, replicas): (&str, &str),
) -> Result<Tally, DemoError> {
    let mut tally = Tally::default();
    let deadline = async_worker::clock::unix_now() + 600;
    for i in 0..args.requests {
        let (submission, id) = envelope(i, deadline);
        store.submit(queue, &submission).await?;
        tally.submitted(id, Instant::now());
    }
    let (n, r) = (args.requests, args.replicas);
    println!("submitted {n} requests to {to}; starting {r} {replicas}");
    Ok(tally)
}

/// Counts in `tally` the records of `list` after the first `seen` (the ones
/// counted before); how many records the list holds now.
pub async fn count_new_records(
    store: &impl ClaimInspect,
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
        default_result_list: DEMO_RESULTS.into(),
        ..RuntimeConfig::default()
    }
}
