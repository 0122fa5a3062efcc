//! The demo on the in-process memory store: replicas as tasks, one hard-stopped mid-run.

use super::DemoArgs;
use super::gateway::{GatewayBehaviour, StandInGateway};
use super::{
    DEMO_QUEUE, DEMO_RESULTS, DemoError, conclude, count_new_records, demo_deadline,
    replica_config, submit_requests,
};
use async_worker::Runtime;
use async_worker::http_handler::{HttpHandler, HttpTarget};
use claim_core::ClaimInspect;
use claim_core::store::StoreConfig;
use claim_memory::MemoryStore;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Runs the demo; true when nothing was lost and every request has one record.
pub async fn run(args: &DemoArgs) -> Result<bool, DemoError> {
    let gateway = StandInGateway::start(GatewayBehaviour::default()).await?;
    let store_config = StoreConfig {
        lease_ttl_ms: args.claim_lease_ttl.as_millis() as u64,
        default_result_list: DEMO_RESULTS.into(),
        // The replicas' queue routes to the demo's list (see `replica_config`).
        queue_result_lists: [(DEMO_QUEUE.to_owned(), DEMO_RESULTS.to_owned())].into(),
        ..StoreConfig::default()
    };
    let store = MemoryStore::new(store_config);
    let target = HttpTarget::new(&gateway.base_url(), "/v1/completions", None)?;
    let handler = Arc::new(HttpHandler::new([(DEMO_QUEUE.to_owned(), target)])?);

    let mut tally = submit_requests(
        &store,
        DEMO_QUEUE,
        args,
        demo_deadline(),
        ("the memory store", "replicas"),
    )
    .await?;

    let started = Instant::now();
    let mut replicas = Vec::new();
    for _ in 0..args.replicas {
        let config = replica_config(args);
        let runtime = Runtime::builder(Arc::new(store.clone()))
            .handler(handler.clone())
            .config(config)
            .build()
            .expect("the demo's settings are valid");
        let stop = CancellationToken::new();
        replicas.push((stop.clone(), tokio::spawn(runtime.run(stop))));
    }

    let mut seen = 0;
    let mut killed = false;
    let give_up = Instant::now() + Duration::from_secs(300);
    while tally.answered() < args.requests && Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(20)).await;
        seen = count_new_records(&store, DEMO_RESULTS, seen, &mut tally).await?;
        if !killed && tally.answered() as f64 >= args.requests as f64 * args.kill_after {
            let (_, victim) = replicas.remove(0);
            victim.abort();
            let held = store.depths(DEMO_QUEUE).await?.claimed;
            println!(
                "hard-stopped replica 0 after {} records ({held} claims held across replicas then); its claims lapse and are redelivered",
                tally.answered()
            );
            killed = true;
        }
    }
    let elapsed = started.elapsed();
    let mut suppressed = 0;
    let mut redelivered = 0;
    for (stop, handle) in replicas {
        stop.cancel();
        let report = handle.await?;
        suppressed += report.duplicates_suppressed;
        redelivered += report.redelivered;
    }
    let extra = [
        ("duplicates suppressed", suppressed.to_string()),
        ("redelivered", redelivered.to_string()),
        ("gateway calls", gateway.calls().to_string()),
    ];
    let title = format!(
        "demo: memory store, {} replicas, one hard-stopped",
        args.replicas
    );
    conclude(&store, (DEMO_RESULTS, seen), tally, extra, title, elapsed).await
}
