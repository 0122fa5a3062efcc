//! The demo on Redis: replicas are child processes of this binary; one gets SIGKILL mid-run.
//!
//! Everything the demo writes lives under a random name (`demo-<hex>`), so it
//! can run against a shared server without touching anyone's queue, and its
//! keys are deleted at the end (terminal markers expire on their own).

use super::DemoArgs;
use super::gateway::{GatewayBehaviour, StandInGateway};
use super::scrape::{metric_sum, scrape};
use super::{DemoError, conclude, count_new_records, demo_deadline, submit_requests};
use claim_core::store::StoreConfig;
use claim_redis::{RedisStore, RedisStoreOptions};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Replica {
    child: Child,
    metrics_port: u16,
}

/// Runs the demo; true when nothing was lost and every request has one record.
pub async fn run(args: &DemoArgs, url: &str) -> Result<bool, DemoError> {
    let name = format!("demo-{:08x}", rand::random::<u32>());
    let results = format!("{name}:results");
    let retry = format!("{name}:retry");
    let lease_secs = args.claim_lease_ttl.as_secs().max(1);
    let store_config = StoreConfig {
        lease_ttl_ms: lease_secs * 1000,
        result_dedup_ttl_ms: 600_000,
        retry_set: retry.clone(),
        default_result_list: results.clone(),
        ..StoreConfig::default()
    };
    let store = RedisStore::connect(RedisStoreOptions::new(url, store_config))
        .await
        .map_err(|e| DemoError::Other(e.to_string()))?;
    let gateway = StandInGateway::start(GatewayBehaviour::default()).await?;
    let transport = serde_json::json!({
        "url": url,
        "retry_queue_name": retry,
        "result_queue_name": results,
        "poll_interval_ms": 20,
        "batch_size": 50,
        "claim_lease_ttl_seconds": lease_secs,
        "claim_reclaim_interval_ms": 500,
        "result_dedup_ttl_seconds": 600,
        "queues": [{"id": "demo", "queue_name": name, "result_queue_name": results, "igw_base_url": gateway.base_url()}],
    });

    let to = format!("{name} on Redis");
    let deadline = demo_deadline();
    let replicas_are = (to.as_str(), "replica processes");
    let mut tally = submit_requests(&store, &name, args, deadline, replicas_are).await?;

    let started = Instant::now();
    let mut replicas = Vec::new();
    for _ in 0..args.replicas {
        replicas.push(spawn_replica(&transport.to_string(), args.concurrency)?);
    }
    let mut seen = 0;
    let mut killed = false;
    let give_up = Instant::now() + Duration::from_secs(300);
    while tally.answered() < args.requests && Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(50)).await;
        seen = count_new_records(&store, &results, seen, &mut tally).await?;
        if !killed && tally.answered() as f64 >= args.requests as f64 * args.kill_after {
            let mut victim = replicas.remove(0);
            victim.child.kill()?; // SIGKILL: no drain, no sweep
            victim.child.wait()?;
            println!(
                "SIGKILLed replica process {} after {} records; its claims lapse and are redelivered",
                victim.child.id(),
                tally.answered()
            );
            killed = true;
        }
    }
    let elapsed = started.elapsed();
    let (mut suppressed, mut expired) = (0.0, 0.0);
    for replica in &replicas {
        let text = scrape(replica.metrics_port).await.unwrap_or_default();
        suppressed += metric_sum(&text, async_worker::metrics::DUPLICATES_SUPPRESSED);
        expired += metric_sum(&text, async_worker::metrics::CLAIMS_EXPIRED);
    }
    for replica in &mut replicas {
        terminate(replica).await?;
    }
    let extra = [
        ("duplicates suppressed", format!("{suppressed}")),
        ("redelivered", format!("{expired}")),
        ("gateway calls", gateway.calls().to_string()),
    ];
    let title = format!(
        "demo: Redis, {} replica processes, one SIGKILLed",
        args.replicas
    );
    let passed = conclude(&store, (&results, seen), tally, extra, title, elapsed).await?;
    let q = store.keys().queue(&name);
    let demo_keys = [
        q.pending,
        q.claimed,
        q.owners,
        q.index,
        q.deliveries,
        q.dead,
        results,
        retry,
        claim_core::wire::seq_key(&name, deadline),
    ];
    if let Err(e) = delete_keys(url, &demo_keys).await {
        println!("note: could not delete the demo's keys ({e}); they are named {name}*");
    }
    Ok(passed)
}

async fn delete_keys(url: &str, keys: &[String]) -> redis::RedisResult<()> {
    let client = redis::Client::open(url)?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    redis::cmd("DEL")
        .arg(keys)
        .query_async::<()>(&mut conn)
        .await
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn spawn_replica(transport: &str, concurrency: usize) -> Result<Replica, DemoError> {
    let metrics_port = free_port()?;
    let exe = std::env::current_exe()?;
    let child = Command::new(exe)
        .args([
            "run",
            "--transport-config",
            transport,
            "--health-port",
            "0",
            "--bind-address",
            "127.0.0.1",
        ])
        .args([
            "--metrics-port",
            &metrics_port.to_string(),
            "--concurrency",
            &concurrency.to_string(),
        ])
        .args(["--drain-timeout", "10s"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .spawn()?;
    Ok(Replica {
        child,
        metrics_port,
    })
}

/// SIGTERM, then wait for the drain.
async fn terminate(replica: &mut Replica) -> Result<(), DemoError> {
    let pid = replica.child.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status()?;
    let give_up = Instant::now() + Duration::from_secs(30);
    while Instant::now() < give_up {
        if replica.child.try_wait()?.is_some() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    replica.child.kill()?;
    Err(DemoError::Other(format!(
        "replica {pid} did not exit within 30 s of SIGTERM"
    )))
}
