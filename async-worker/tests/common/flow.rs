//! What the flow-control process tests share (upstream's e2e scenarios, the chart's flow values): a directory of config files, a gate's `address`, gate decisions read from /metrics, and the proof that a closed gate holds its queue.

use super::worker::Worker;
use async_worker::metrics as m;
use async_worker::test_support::gateway::StandInGateway;
use async_worker::test_support::sample;
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How long a scenario may take to reach a state it waits for.
pub const BOUND: Duration = Duration::from_secs(60);

/// A private directory of config files (where the chart mounts its
/// ConfigMap), removed when dropped.
pub struct ConfigDir(PathBuf);

impl ConfigDir {
    pub fn new(what: &str) -> ConfigDir {
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("{what}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the config directory");
        ConfigDir(dir)
    }

    pub fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temp path")
    }

    /// Writes `text` as the file `name`; its path.
    pub fn write(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("write a config file");
        path.to_str().expect("a UTF-8 temp path").to_owned()
    }
}

impl Drop for ConfigDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The `--transport-config` of one queue on the default queue, id
/// `queue_id`, sent to `gateway` behind a `gate_type` gate with
/// `gate_params`, polled every 100 ms in batches of 10.
pub fn gated_queue(
    queue_id: &str,
    gateway: &StandInGateway,
    gate_type: &str,
    gate_params: serde_json::Value,
) -> String {
    serde_json::json!({
        "poll_interval_ms": 100,
        "batch_size": 10,
        "queues": [{
            "id": queue_id, "queue_name": super::QUEUE,
            "igw_base_url": gateway.base_url(),
            "gate_type": gate_type,
            "gate_params": gate_params,
        }],
    })
    .to_string()
}

/// `host:port` of a private server's URL: the `address` a redis gate dials.
pub fn address(redis_url: &str) -> String {
    let address = redis_url.trim_start_matches("redis://");
    address.trim_end_matches('/').to_owned()
}

/// `gate_decisions_total` of queue `queue_id` for `reason` (0 before its
/// series exists).
pub fn decisions(page: &str, queue_id: &str, reason: &str) -> f64 {
    let labels = [("queue_id", queue_id), ("reason", reason)];
    sample(page, m::GATE_DECISIONS, &labels).unwrap_or(0.0)
}

/// `gate_decisions_total` of pool `pool`'s gate for `reason`.
pub fn pool_decisions(page: &str, pool: &str, reason: &str) -> f64 {
    let labels = [("queue_id", ""), ("pool_name", pool), ("reason", reason)];
    sample(page, m::GATE_DECISIONS, &labels).unwrap_or(0.0)
}

/// Waits until the gate of queue `queue_id` has counted `polls` more
/// closed polls (`gate_closed`) than it had when called.
pub async fn closed_polls(worker: &Worker, queue_id: &str, polls: f64) {
    let closed = |page: &str| decisions(page, queue_id, "gate_closed");
    let start = closed(&worker.metrics_when_up().await);
    let what = format!("{polls} more closed polls of {queue_id}");
    super::eventually(&what, BOUND, async || {
        closed(&worker.metrics().await) >= start + polls
    })
    .await;
}

/// A gated queue: its id (the metrics' `queue_id`), its pending set and
/// the result list its requests are answered to.
#[derive(Debug, Clone, Copy)]
pub struct Gated<'a> {
    pub queue_id: &'a str,
    pub queue: &'a str,
    pub results: &'a str,
}

impl Gated<'_> {
    /// The default queue under id `queue_id`, answered to the default list.
    pub fn default_queue(queue_id: &str) -> Gated<'_> {
        Gated {
            queue_id,
            queue: super::QUEUE,
            results: super::RESULTS,
        }
    }
}

/// Asserts the gate holds `gated`: while three more closed polls go by,
/// its `pending` members stay pending and unclaimed, and no record lands
/// and no gateway call is made.
pub async fn assert_held(
    worker: &Worker,
    conn: &mut MultiplexedConnection,
    gateway: &StandInGateway,
    gated: Gated<'_>,
    pending: usize,
) {
    let (calls, records) = (gateway.calls(), results(conn, gated.results).await);
    closed_polls(worker, gated.queue_id, 3.0).await;
    let queue = gated.queue;
    let waiting: usize = conn.zcard(queue).await.expect("ZCARD");
    let claimed: usize = conn.hlen(format!("{queue}:claimed")).await.expect("HLEN");
    assert_eq!((waiting, claimed), (pending, 0), "pending and claimed");
    let now = results(conn, gated.results).await;
    assert_eq!(now, records, "no record while closed");
    assert_eq!(gateway.calls(), calls, "no gateway call while closed");
}

async fn results(conn: &mut MultiplexedConnection, list: &str) -> usize {
    conn.llen(list).await.expect("LLEN")
}

/// Waits until the list `list` holds `n` records.
pub async fn records_in_within(conn: &mut MultiplexedConnection, list: &str, n: usize) {
    let what = format!("{n} records in {list}");
    super::eventually(&what, BOUND, async || results(conn, list).await >= n).await;
}

/// Waits until the default result list holds `n` records.
pub async fn records_within(conn: &mut MultiplexedConnection, n: usize) {
    records_in_within(conn, super::RESULTS, n).await;
}
