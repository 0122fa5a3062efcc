//! The chaos run behind `cargo xtask chaos`: real `async-worker` processes, a real redis-server (or a Redis Cluster, or a Sentinel group), and faults.
//!
//! A private redis-server with AOF `appendfsync always` (or `everysec`
//! with `--appendfsync everysec`; its own port and data dir), a seeded stand-in gateway with random latency, some 500 and
//! 429 answers and a few calls slower than two leases (only heartbeats keep
//! those), and N worker processes (the release `async-worker` binary,
//! lease 3 s, reclaim interval 500 ms). One worker reaches Redis through a
//! TCP proxy in this program. A producer submits M generations in the Go
//! producer's format, half of them by reference (a few with no payload
//! stored), with resubmissions and cancels, while the plan's
//! faults strike: a random worker SIGKILLed every few seconds and started
//! again, redis-server SIGKILLed and restarted once on the same data dir,
//! and the proxied worker cut off from Redis for a few seconds. Then it
//! waits for every generation's record, SIGTERMs the workers and prints the
//! figures. Exit code 0 only when nothing was lost, every accepted
//! generation has exactly one record carrying its `request_token`, every
//! missing payload ended `PAYLOAD_UNAVAILABLE` (or `CANCELLED`) and no
//! answered generation's payload key is left.
//!
//! `--topology cluster` runs on a private Redis Cluster (three primaries
//! with a replica each; the queue and the result list on different
//! primaries, so every ack is the split push-once-then-drop) and
//! `--topology sentinel` on a primary and replica behind three sentinels
//! ([`topology`]). The workers get Go's `mode`, `addrs`, `master_name` and
//! `--replica-acks` as `replica_acks`; the redis-server restart becomes a
//! SIGKILL of a primary (cluster: the queue's, or with `--kill list|both`
//! the result list's, or both in turn) with its replica promoted
//! and the killed node started again as a replica ([`failover`]); there is
//! no proxy cut; the producer counts a submit accepted only once a replica
//! holds it ([`raw::Raw::on_replica`]). Lost must stay 0; extra records a
//! Sentinel failover causes (an undone ack) are counted and explained, and
//! stay a failure in a cluster whose killed primary is not the result
//! list's (with `--kill list|both` they are counted and explained too).
//!
//! A binary of the `harness` crate, not of async-worker: it needs
//! claim-redis's and async-worker's `test-support` features (the private
//! redis-server, the stand-in gateway), which the processor binary's build
//! never turns on. `cargo xtask chaos` builds both in release mode, in
//! separate cargo calls, so the worker under test is the production build.

mod failover;
mod faults;
mod fleet;
mod payloads;
mod plan;
mod producer;
mod proxy;
mod raw;
mod redelivery;
mod report;
mod results;
mod topology;
mod watch;

use async_worker::test_support::gateway::{GatewayBehaviour, StandInGateway};
use claim_core::Generation;
use claim_core::store::StoreConfig;
use claim_redis::RedisStore;
use claim_redis::testing::redis_server_path;
use clap::Parser;
use faults::{Targets, stamp};
use fleet::Fleet;
use plan::{Args, Plan};
use producer::Ledger;
use raw::Raw;
use results::Records;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use topology::Deployment;

/// The run's queue, result list and retry set (on its own server, so no prefix).
pub const QUEUE: &str = "chaos-requests";
pub const RESULTS: &str = "chaos-results";
pub const RETRY: &str = "chaos-retry";

fn main() -> ExitCode {
    let args = Args::parse();
    let plan = match Plan::from_args(&args) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("chaos: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    match runtime.block_on(run(plan)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("chaos: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(plan: Plan) -> Result<bool, String> {
    let seed = plan.seed;
    let (redis, redis_fault) = if plan.layout.replicated() {
        (
            format!(
                "{}, no persistence (data on replicas); workers' replica_acks {}",
                plan.layout.mode(),
                plan.replica_acks
            ),
            format!(
                "{}; its replica promoted, the killed node started again as a replica); no proxy cut (standalone only)",
                if plan.layout == plan::Layout::Cluster {
                    match plan.kill {
                        plan::Kill::Queue => {
                            "one primary SIGKILLed (the one holding the queue's slot"
                        }
                        plan::Kill::List => {
                            "one primary SIGKILLed (the one holding the result list's slot"
                        }
                        plan::Kill::Both => {
                            "two primaries SIGKILLed in turn (the queue's, then the result list's"
                        }
                    }
                } else {
                    "one primary SIGKILLed (the Sentinel primary"
                }
            ),
        )
    } else {
        (
            format!("standalone, appendfsync {}", faults::fsync_policy(&plan)),
            format!(
                "one redis-server restart, one {:?} proxy cut of worker {}",
                plan.cut_for, plan.cut_slot
            ),
        )
    };
    println!(
        "chaos: seed {seed}; {redis}; {} workers, {} requests at {}/s, {:.0}% by reference ({:.0}% of those with no payload stored); {} worker kills, {redis_fault}",
        plan.workers,
        plan.requests,
        plan.rate,
        plan.payload_ref * 100.0,
        plan.missing_payloads * 100.0,
        plan.kills(),
    );
    if redis_server_path().is_none() {
        return Err("redis-server is not on PATH: the chaos run needs it (Debian: apt-get install redis-server)".into());
    }
    let starting = Instant::now();
    let deployment = tokio::task::block_in_place(|| Deployment::start(&plan))?;
    let started_in = starting.elapsed();
    let logs = std::env::temp_dir().join(format!("chaos-{seed}-{}", std::process::id()));
    std::fs::create_dir_all(&logs).map_err(|e| format!("creating {}: {e}", logs.display()))?;
    let behaviour = GatewayBehaviour {
        min_latency: Duration::from_millis(20),
        max_latency: Duration::from_millis(1000),
        error_rate: 0.02,
        throttle_rate: 0.02,
        slow_rate: 0.01,
        slow_latency: plan.lease * 2 + Duration::from_secs(1),
    };
    let gateway = StandInGateway::start_seeded(behaviour, plan.gateway_seed)
        .await
        .map_err(|e| format!("starting the stand-in gateway: {e}"))?;
    let proxy = match &deployment {
        Deployment::Standalone(server) => {
            let upstream = ([127, 0, 0, 1], server.port()).into();
            let proxy = proxy::Proxy::start(upstream)
                .await
                .map_err(|e| format!("starting the proxy: {e}"))?;
            Some(Arc::new(proxy))
        }
        _ => None,
    };
    let store = RedisStore::connect(deployment.store_options(store_config(&plan)))
        .await
        .map_err(|e| e.to_string())?;
    let placement = tokio::task::block_in_place(|| deployment.placement(&store))?;
    println!("redis: {placement}; up in {started_in:.1?}");
    let target = deployment.target();
    let configs = (0..plan.workers)
        .map(|slot| {
            let url = match &proxy {
                Some(proxy) if slot == plan.cut_slot => proxy.url(),
                _ => deployment.url(),
            };
            let fields = deployment.transport_fields(&plan);
            transport_config(&plan, &url, &gateway.base_url(), fields)
        })
        .collect();
    let fleet = Fleet::start(&plan.worker_bin, &logs, configs, plan.concurrency)
        .map_err(|e| format!("starting {}: {e}", plan.worker_bin.display()))?;
    let fleet = Arc::new(tokio::sync::Mutex::new(fleet));
    watch::wait_until_up(&fleet, plan.workers).await?;
    println!("workers up; logs in {}", logs.display());

    let start = Instant::now();
    let ledger = Arc::new(std::sync::Mutex::new(Ledger::default()));
    let records = Arc::new(std::sync::Mutex::new(Records::default()));
    let stop = CancellationToken::new();
    let producer = tokio::spawn(producer::run(
        store.clone(),
        ledger.clone(),
        plan.clone(),
        start,
        plan.layout.replicated().then(|| target.clone()),
    ));
    let reader = tokio::spawn(watch::read_results(
        target.clone(),
        records.clone(),
        stop.clone(),
    ));
    let expiries = Arc::new(std::sync::Mutex::new(Vec::new()));
    let supervisor = tokio::spawn(watch::supervise(
        fleet.clone(),
        expiries.clone(),
        start,
        stop.clone(),
    ));
    let mut raw = Raw::new(&target);
    faults::apply_fsync_policy(&plan, &mut raw).await?;
    let mut targets = Targets {
        plan: plan.clone(),
        start,
        fleet: fleet.clone(),
        deployment,
        proxy,
        store: store.clone(),
        raw,
    };
    let outcome = faults::run(&mut targets).await?;
    producer.await.map_err(|e| e.to_string())??;
    println!(
        "{} all {} submissions accepted",
        stamp(start),
        plan.requests
    );
    let mut ride_through: faults::RideThrough = (0, Vec::new());
    let mut checks = Vec::new();
    let cut = match outcome.cut {
        Some(handle) => handle.await.ok().map(|(report, check)| {
            checks.push(check);
            (report.severed, report.turned_away)
        }),
        None => None,
    };
    for handle in outcome.ride_through {
        checks.push(handle.await.unwrap_or_default());
    }
    for (checked, stalled) in checks {
        ride_through.0 += checked;
        ride_through.1.extend(stalled);
    }

    let answered = watch::settle(&ledger, &records, &store, start, plan.short).await;
    stop.cancel();
    let _ = reader.await;
    let _ = supervisor.await;
    let mut raw = targets.raw;
    let _ = results::read_new(&mut raw, &records).await;
    let statuses = {
        let mut fleet = fleet.lock().await;
        fleet.scrape_all().await;
        fleet.terminate(Duration::from_secs(30)).await
    };
    let unclean_exits = statuses
        .iter()
        .filter(|s| !s.is_some_and(|s| s.success()))
        .count();
    let mut kills = Vec::new();
    for (at, handle) in outcome.kills {
        kills.push((at, handle.await.unwrap_or_default()));
    }
    let ledger = std::mem::take(&mut *ledger.lock().expect("ledger lock"));
    let records = std::mem::take(&mut *records.lock().expect("records lock"));
    let generations: Vec<Generation> = ledger
        .generations
        .iter()
        .flat_map(|(id, tokens)| {
            tokens
                .iter()
                .map(|t| Generation::new(id.clone(), t.clone()))
        })
        .collect();
    let unmarked = results::unmarked(&mut raw, &store, &generations)
        .await
        .map_err(|e| e.to_string())?;
    let leftovers = results::leftovers(&store)
        .await
        .map_err(|e| e.to_string())?;
    let failed_over = !outcome.failovers.is_empty();
    let payloads =
        payloads::PayloadCheck::judge(&ledger, &records, &store, failed_over.then_some(&mut raw))
            .await?;
    let windows = plan.expiry_windows();
    let unprompted = expiries
        .lock()
        .expect("expiries lock")
        .iter()
        .filter(|(at, _)| !windows.iter().any(|w| w.contains(at)))
        .map(|(_, n)| *n as u64)
        .sum();
    let fleet = fleet.lock().await;
    let replica_shortfalls = fleet.count_log_lines(&[
        "fewer replicas than replica_acks acknowledged",
        "WAIT for replicas failed",
    ]);
    let figures = report::Figures {
        plan: &plan,
        ledger: &ledger,
        records: &records,
        counters: fleet.totals(),
        unmarked,
        leftovers,
        payloads,
        kills,
        records_across_restart: outcome.records_across_restart,
        redis_back_after: outcome.redis_back_after,
        failovers: outcome.failovers.clone(),
        placement,
        replica_shortfalls,
        cut,
        unexpected_exits: fleet.unexpected_exits.len(),
        unclean_exits,
        ride_through,
        unprompted_expiries: unprompted,
        elapsed: start.elapsed(),
    };
    figures.print();
    let passed = answered && figures.failures().is_empty();
    if passed && !plan.keep_logs {
        let _ = std::fs::remove_dir_all(&logs);
    } else {
        if let Some(dir) = targets.deployment.log_dir() {
            let _ = std::fs::copy(dir.join("redis.log"), logs.join("redis.log"));
        }
        println!(
            "worker (and, standalone, redis) logs kept in {}",
            logs.display()
        );
    }
    Ok(passed)
}

fn store_config(plan: &Plan) -> StoreConfig {
    StoreConfig {
        lease_ttl_ms: plan.lease.as_millis() as u64,
        result_dedup_ttl_ms: 3_600_000,
        retry_set: RETRY.into(),
        default_queue: QUEUE.into(),
        default_result_list: RESULTS.into(),
        queue_result_lists: [(QUEUE.to_owned(), RESULTS.to_owned())].into(),
        ..StoreConfig::default()
    }
}

/// A worker's transport config (Go field names), with the topology's
/// `mode`, `addrs`, `master_name` and `replica_acks` in `fields`.
fn transport_config(
    plan: &Plan,
    url: &str,
    gateway: &str,
    fields: serde_json::Map<String, serde_json::Value>,
) -> String {
    let mut config = serde_json::json!({
        "url": url,
        "retry_queue_name": RETRY,
        "result_queue_name": RESULTS,
        "poll_interval_ms": 20,
        "batch_size": 50,
        "claim_lease_ttl_seconds": plan.lease.as_secs(),
        "claim_reclaim_interval_ms": plan.reclaim_interval.as_millis() as u64,
        "result_dedup_ttl_seconds": 3600,
        "queues": [{"id": "chaos", "queue_name": QUEUE, "result_queue_name": RESULTS, "igw_base_url": gateway}],
    });
    if let Some(object) = config.as_object_mut() {
        object.extend(fields);
    }
    config.to_string()
}
