//! The measuring half of `cargo xtask bench`: one run per process, figures on stdout.
//!
//! `cargo xtask bench` builds this binary (of the `harness` crate) in release mode, starts its own
//! redis-servers and runs this program once per run, each in a fresh
//! process so the worker's RSS is the run's own. Each run prints one `row`
//! line (`key=value` pairs for the table) and one `json` line (every figure),
//! which xtask collects. It lives in the harness crate, not in async-worker,
//! so the product never carries it and it may use test support. Every run flushes the Redis it
//! is given with `--url`; without one it starts a private redis-server.
//!
//! Runs: `protected` (the runtime over RedisStore), `unprotected` (ZPOPMIN →
//! LPUSH), `memory` (the runtime over MemoryStore), `replicas` (three
//! runtimes on one queue), `cluster` (the runtime over RedisStore on a
//! private cluster of three primaries, `--queues` queues on as many
//! primaries; never given a `--url`), `profile` (Redis CPU of each script
//! on its own), `flow` (the spare-capacity bench: a stand-in inference
//! pool shared by interactive users and a gated batch backlog, see [`flow`]),
//! and at scale `backlog` (a small and a large backlog held steady during a
//! drain, see [`backlog`]), `queues` (many idle queues beside a few busy
//! ones, see [`queues`]) and `answered` (the memory an answered request
//! still holds, see [`answered`]).
//! Every run but `replicas`, `profile` and `flow` has three phases: a hold with `--hold-pending`
//! requests pending and `--hold-inflight` held by a waiting handler (worker
//! RSS, Redis bytes per claim), a drain of `--requests` enqueued before the
//! clock starts (jobs/s, Redis CPU, calls and round trips per job), and a
//! steady arrival at half the drain rate (enqueue→result p50/p99).

mod answered;
mod backlog;
mod counting;
mod flow;
mod members;
mod profile;
mod protected;
mod queues;
mod report;
mod server;
mod target;
mod unprotected;

use async_trait::async_trait;
use async_worker::{Handler, HandlerOutcome, Request};
use clap::Parser;
use counting::Latency;
use protected::Backend;
use report::emit;
use server::Admin;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use target::Target;
use tokio_util::sync::CancellationToken;

#[derive(Parser, Debug)]
struct Args {
    /// protected | unprotected | memory | replicas | cluster | profile | flow
    /// | backlog | queues | answered
    run: String,
    /// The name the row carries (default: the run).
    #[arg(long)]
    name: Option<String>,
    /// The redis-server to use (it is flushed!). Without it the run starts
    /// a private one on a free port (never a shared server).
    #[arg(long)]
    url: Option<String>,
    #[arg(long, default_value_t = 200_000)]
    requests: usize,
    #[arg(long, default_value_t = 1000)]
    concurrency: usize,
    #[arg(long, default_value_t = 100)]
    batch: usize,
    #[arg(long, default_value_t = 256)]
    ack_batch: usize,
    /// Pause between polls when a batch was not full.
    #[arg(long, default_value_t = 5)]
    poll_ms: u64,
    /// Length of the steady-arrival phase.
    #[arg(long, default_value_t = 4.0)]
    latency_secs: f64,
    #[arg(long, default_value_t = 100_000)]
    hold_pending: usize,
    #[arg(long, default_value_t = 5_000)]
    hold_inflight: usize,
    #[arg(long, default_value_t = 3)]
    replicas: usize,
    /// Queues of the `cluster` run, each on its own primary (1 to 3).
    #[arg(long, default_value_t = 3)]
    queues: usize,
    /// Claims held before the profile acks the oldest.
    #[arg(long, default_value_t = 100)]
    window: usize,
    /// Payload size in bytes (0: the small default, `{"model":"m","prompt":"hi"}`).
    #[arg(long, default_value_t = 0)]
    payload_bytes: usize,
    /// Store payloads apart, as Go's producer does with `WithPayloadKeys`.
    #[arg(long)]
    by_reference: bool,
    /// The `backlog` run's backlog sizes, held steady during each drain.
    #[arg(long, value_delimiter = ',', default_values_t = [10_000, 1_000_000], value_parser = clap::value_parser!(usize))]
    backlog_sizes: Vec<usize>,
    /// The `queues` run's configured queues.
    #[arg(long, default_value_t = 200)]
    configured_queues: usize,
    /// The `queues` run's busy queues (those the requests are dealt over).
    #[arg(long, default_value_t = 10)]
    busy_queues: usize,
    /// Length of each of the `queues` run's idle windows, in seconds.
    #[arg(long, default_value_t = 15)]
    idle_secs: u64,
    /// Requests the `answered` run submits, drains and consumes.
    #[arg(long, default_value_t = 20_000)]
    answered: usize,
    /// The `answered` run's store `result_dedup_ttl`, in seconds (its lease is 3 s).
    #[arg(long, default_value_t = 5)]
    result_dedup_ttl: u64,
    /// Log as the processor does in a pod: JSON lines, filtered by this
    /// `RUST_LOG` directive (`info`, `info,async_worker::request=off`),
    /// formatted in full and written to nowhere. Without it nothing is
    /// logged (no subscriber), as before.
    #[arg(long)]
    log_filter: Option<String>,
}

/// What every phase needs to know.
#[derive(Debug, Clone)]
pub struct Settings {
    pub queue: String,
    pub list: String,
    pub requests: usize,
    pub concurrency: usize,
    pub batch: usize,
    pub ack_batch: usize,
    pub poll: Duration,
    pub latency_secs: f64,
    pub hold_pending: usize,
    pub hold_inflight: usize,
    pub payloads: members::Payloads,
    /// Each request's deadline, this many seconds after it is enqueued.
    pub deadline_secs: i64,
}

pub fn id_of(seq: usize) -> String {
    format!("r{seq}")
}

pub fn token_of(seq: usize) -> String {
    format!("t{seq}")
}

pub fn seq_of(id: &str) -> Option<usize> {
    id.strip_prefix('r')?.parse().ok()
}

/// This process's resident set, from `/proc/self/status`.
pub fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// CPU time this process has used (all threads), in seconds, from `/proc/self/stat`.
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at `) `.
    let fields: Vec<&str> = stat
        .rsplit_once(") ")
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 here; 100 ticks a second.
    (ticks(11) + ticks(12)) / 100.0
}

/// Busy and total jiffies of the whole machine, from `/proc/stat`.
pub fn machine_jiffies() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let cpu: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    let total: u64 = cpu.iter().sum();
    // idle and iowait are fields 4 and 5.
    let idle = cpu.get(3).copied().unwrap_or(0) + cpu.get(4).copied().unwrap_or(0);
    (total - idle, total)
}

/// The no-op handler: answers at once.
#[derive(Debug)]
pub struct NoOp;

#[async_trait]
impl Handler for NoOp {
    async fn handle(&self, _request: &Request, _cancel: CancellationToken) -> HandlerOutcome {
        HandlerOutcome::Success {
            status: 200,
            body: "{}".to_owned(),
        }
    }
}

/// A handler that waits until released, so work stays in flight.
#[derive(Debug, Default)]
pub struct Hold {
    pub entered: AtomicUsize,
    pub release: CancellationToken,
}

#[async_trait]
impl Handler for Hold {
    async fn handle(&self, _request: &Request, _cancel: CancellationToken) -> HandlerOutcome {
        self.entered.fetch_add(1, Ordering::Relaxed);
        self.release.cancelled().await;
        HandlerOutcome::Success {
            status: 200,
            body: "{}".to_owned(),
        }
    }
}

/// Enqueues requests `0..count` at `rate` per second from now: the range
/// due at each moment goes to `enqueue` in one call.
pub async fn send_at_rate(count: usize, rate: f64, mut enqueue: impl AsyncFnMut(Range<usize>)) {
    let origin = Instant::now();
    let mut sent = 0;
    while sent < count {
        let due = ((origin.elapsed().as_secs_f64() * rate) as usize).min(count);
        if due > sent {
            enqueue(sent..due).await;
            sent = due;
        } else {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

/// The latencies `latency` collected (µs), sorted.
pub fn sorted_micros(latency: &Latency) -> Vec<u32> {
    let mut micros = std::mem::take(&mut *latency.micros.lock().unwrap());
    micros.sort_unstable();
    micros
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if let Some(directive) = &args.log_filter {
        tracing_subscriber::fmt()
            .json()
            .with_env_filter(tracing_subscriber::EnvFilter::new(directive))
            .with_writer(std::io::sink)
            .init();
    }
    let set = Arc::new(Settings {
        queue: claim_core::wire::DEFAULT_QUEUE.to_owned(),
        list: claim_core::wire::DEFAULT_RESULT_LIST.to_owned(),
        requests: args.requests,
        concurrency: args.concurrency,
        batch: args.batch,
        ack_batch: args.ack_batch,
        poll: Duration::from_millis(args.poll_ms),
        latency_secs: args.latency_secs,
        hold_pending: args.hold_pending,
        hold_inflight: args.hold_inflight,
        payloads: members::Payloads {
            bytes: args.payload_bytes,
            by_reference: args.by_reference,
        },
        deadline_secs: 3600,
    });
    let name = args.name.clone().unwrap_or_else(|| args.run.clone());
    // Keeps a private server alive for the run when no --url was given.
    let mut private = None;
    let url = match &args.url {
        Some(_) if args.run == "cluster" => {
            eprintln!("bench: the cluster run starts its own cluster; leave out --url");
            std::process::exit(2);
        }
        Some(url) => url.clone(),
        None if args.run == "memory" || args.run == "cluster" => String::new(),
        None => {
            let server = claim_redis::testing::RedisServer::start(Default::default())
                .expect("start a private redis-server (is redis-server on PATH?)");
            let url = server.url();
            private = Some(server);
            url
        }
    };
    println!(
        "settings requests={} concurrency={} batch={} ack_batch={} poll_ms={} hold={}+{} latency_secs={} payload_bytes={} by_reference={}",
        set.requests,
        set.concurrency,
        set.batch,
        set.ack_batch,
        args.poll_ms,
        set.hold_pending,
        set.hold_inflight,
        set.latency_secs,
        set.payloads.bytes,
        set.payloads.by_reference
    );
    let admin = || async { Admin::connect(&url).await.expect("connect to Redis") };
    if args.url.is_some()
        && let Err(refusal) = admin().await.refuse_foreign(&url).await
    {
        eprintln!("bench: {refusal}");
        std::process::exit(2);
    }
    match args.run.as_str() {
        "protected" | "memory" | "cluster" => {
            let backend = match args.run.as_str() {
                "memory" => Backend::Memory,
                "cluster" => Backend::Redis(Arc::new(Target::cluster(args.queues).await)),
                _ => Backend::Redis(Arc::new(Target::standalone(&url, &set).await)),
            };
            let held = protected::hold(&set, &backend).await;
            let drain = protected::drain(&set, &backend, 1).await;
            let rate = drain.jobs as f64 / drain.elapsed.as_secs_f64() / 2.0;
            let latency = protected::latency(&set, &backend, rate).await;
            emit(&name, &set, &drain, &latency, Some(&held));
        }
        "replicas" => {
            let backend = Backend::Redis(Arc::new(Target::standalone(&url, &set).await));
            let drain = protected::drain(&set, &backend, args.replicas).await;
            emit(&name, &set, &drain, &[], None);
        }
        "unprotected" => {
            let admin = admin().await;
            let held = unprotected::hold(&set, &url, &admin).await;
            let drain = unprotected::drain(&set, &url, &admin).await;
            let rate = drain.jobs as f64 / drain.elapsed.as_secs_f64() / 2.0;
            let latency = unprotected::latency(&set, &url, &admin, rate).await;
            emit(&name, &set, &drain, &latency, Some(&held));
        }
        "flow" => flow::run(&name, &url, &set).await,
        "backlog" => backlog::run(&name, &url, &set, &args.backlog_sizes).await,
        "queues" => {
            let shape = queues::Shape {
                configured: args.configured_queues,
                busy: args.busy_queues,
                idle: Duration::from_secs(args.idle_secs),
            };
            queues::run(&name, &url, &set, &shape).await;
        }
        "answered" => {
            let dedup = Duration::from_secs(args.result_dedup_ttl);
            answered::run(&name, &url, &set, args.answered, dedup).await;
        }
        "profile" => {
            let admin = admin().await;
            let steps = profile::run(&set, &url, &admin, args.window).await;
            println!(
                "json {}",
                serde_json::json!({ "name": name, "steps": steps })
            );
        }
        other => {
            eprintln!("bench: unknown run `{other}`");
            std::process::exit(2);
        }
    }
    drop(private);
}
