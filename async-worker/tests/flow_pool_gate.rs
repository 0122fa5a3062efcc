//! Upstream's `benchmark-pool-gate.yaml` e2e scenario, scaled down, against the real binary: a pool of 16 workers behind a pool gate `wait-on-refuse` of `composite` [`local-max-concurrency` limit 5], given as a JSON string as the values file gives it, feeding an ungated queue.
//!
//! Every request is answered once, and the gate, not the workers, bounds
//! what is in flight at the gateway: never more than 5 calls at once.

mod common;

use common::flow::{self, BOUND, ConfigDir};
use common::stage::Stage;
use common::worker::Worker;
use std::time::Duration;

const POOL: &str = "benchmark-pool";
const REQUESTS: usize = 300;
const LIMIT: u64 = 5;

/// The values file's pool: its gate's inner configuration a JSON string,
/// the limit a number (both as upstream writes them).
fn pools_file() -> String {
    let inner = serde_json::json!({
        "gate_type": "composite",
        "gate_params": {"gates": [
            {"gate_type": "local-max-concurrency", "gate_params": {"limit": LIMIT}},
        ]},
    });
    serde_json::json!([{
        "id": POOL, "workers": 16,
        "gate_type": "wait-on-refuse",
        "gate_params": {"gate": inner.to_string()},
    }])
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_gate_of_five_bounds_the_calls_in_flight_while_sixteen_workers_answer_every_request()
{
    // Calls long enough that 16 workers would overlap far past 5.
    let Some(mut stage) = Stage::answering_after(Duration::from_millis(40)).await else {
        return;
    };
    let dir = ConfigDir::new("flow-pool-gate");
    let pools = dir.write("worker-pools.json", &pools_file());
    let config = serde_json::json!({
        "poll_interval_ms": 50,
        "batch_size": 16,
        "queues": [{
            "id": "benchmark", "queue_name": common::QUEUE,
            "worker_pool_id": POOL,
            "igw_base_url": stage.gateway.base_url(),
        }],
    })
    .to_string();
    #[rustfmt::skip]
    let flags = [
        "--transport-config", &config,
        "--pool-config-file", &pools,
        "--claim-lease-ttl", "5s",
        "--drain-timeout", "5s",
    ];
    let mut worker = Worker::start_flags(&stage.url, &flags);
    let ids = common::go_submit_numbered(&mut stage.conn, REQUESTS).await;

    flow::records_within(&mut stage.conn, REQUESTS).await;
    let records = common::records(&mut stage.conn).await;
    let counts = common::records_per_id(&records);
    assert!(counts.values().all(|n| *n == 1), "two records for one id");
    assert_eq!(counts.into_keys().collect::<Vec<_>>(), Vec::from_iter(ids));
    assert!(records.iter().all(|r| r.status_code == Some(200)));
    assert_eq!(stage.gateway.calls(), REQUESTS as u64, "each sent once");
    // At most the limit at once, and the limit reached: the gate admits
    // as many as it allows.
    let most = stage.gateway.max_concurrent_calls();
    assert_eq!(most, LIMIT, "{most} calls at once");

    // The gate held workers back: its waits are counted on the pool's series.
    let page = worker.metrics().await;
    let waits = flow::pool_decisions(&page, POOL, "gate_closed");
    assert!(waits > 0.0, "no wait counted:\n{page}");
    assert!(common::depths(&mut stage.conn).await.nothing_claimed());
    worker.stop_within(BOUND).await;
}
