//! Shared helpers for the Redis and process tests: a private redis-server (and a process test's whole stage), a Go-style producer and consumer, Redis bookkeeping snapshots, bounded polling.
//!
//! Every test runs against its own `redis-server` on a free port (never the
//! shared one on 6379), so keys carry no prefix and are exactly the Go
//! processor's: `request-sortedset`, `result-list`, `retry-sortedset`,
//! `request-active:<id>`, `request-cancel:<id>`.
#![allow(dead_code)]

pub mod admin;
pub mod chart;
pub mod flow;
pub mod rig;
pub mod stage;
pub mod worker;

use claim_core::wire::{self, Envelope, ResultRecord};
use claim_redis::testing::{RedisServer, RedisServerOptions, require_redis_server};
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// The pending sorted set (Go's default queue).
pub const QUEUE: &str = wire::DEFAULT_QUEUE;
/// The result list the members name (Go's default).
pub const RESULTS: &str = wire::DEFAULT_RESULT_LIST;
/// The shared retry sorted set (Go's default).
pub const RETRIES: &str = wire::DEFAULT_RETRY_SET;

/// A private server, or `None` (after saying why) when `redis-server` is
/// missing outside CI. With `CI` set a missing binary fails the test.
pub fn redis_server() -> Option<RedisServer> {
    redis_server_with(RedisServerOptions::default())
}

/// [`redis_server`] started with `options` (say, AOF with fsync always).
pub fn redis_server_with(options: RedisServerOptions) -> Option<RedisServer> {
    if require_redis_server().is_none() {
        eprintln!("skipped: redis-server not on PATH (set CI to make this a failure)");
        return None;
    }
    Some(RedisServer::start(options).expect("start a private redis-server"))
}

/// A plain connection for raw commands, as a Go producer or consumer uses.
/// No response timeout: BRPOP blocks as long as it was asked to.
pub async fn connect(url: &str) -> MultiplexedConnection {
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
    redis::Client::open(url)
        .expect("redis client")
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .expect("raw Redis connection")
}

pub use async_worker::clock::unix_now;

/// The request token a test gives request `id`.
pub fn token(id: &str) -> String {
    format!("tok-{id}")
}

/// `RedisSortedSetProducer.SubmitRequest`: one MULTI that deletes the cancel
/// key, sets the active token until the deadline and ZADDs the member.
pub async fn go_submit(
    conn: &mut MultiplexedConnection,
    id: &str,
    deadline: i64,
    payload: serde_json::Value,
) {
    go_submit_envelope(conn, &Envelope::new(id, token(id), deadline, payload)).await;
}

/// `n` requests with ids `r-000`.. as the Go producer submits them,
/// deadlines ten minutes out; returns their ids.
pub async fn go_submit_numbered(conn: &mut MultiplexedConnection, n: usize) -> BTreeSet<String> {
    let deadline = unix_now() + 600;
    let mut ids = BTreeSet::new();
    for i in 0..n {
        let id = format!("r-{i:03}");
        let payload = serde_json::json!({"model": "m", "prompt": id});
        go_submit(conn, &id, deadline, payload).await;
        ids.insert(id);
    }
    ids
}

/// [`go_submit`] of a prepared envelope (to a chosen result list, say).
pub async fn go_submit_envelope(conn: &mut MultiplexedConnection, envelope: &Envelope) {
    go_submit_to(conn, QUEUE, envelope).await;
}

/// [`go_submit_envelope`] to the pending set `queue`, naming it as the
/// request's queue as a Go producer of that queue does.
pub async fn go_submit_to(conn: &mut MultiplexedConnection, queue: &str, envelope: &Envelope) {
    let mut envelope = envelope.clone();
    envelope.internal.request_queue_name = queue.into();
    let id = envelope.data.id.as_str();
    let deadline = envelope.data.deadline;
    let member = envelope.to_bytes();
    // Go's SET EX refuses a TTL below 1 s; a late request keeps its key 1 s.
    let ttl = (deadline - unix_now()).max(1);
    redis::pipe()
        .atomic()
        .del(wire::cancel_key(id))
        .ignore()
        .cmd("SET")
        .arg(wire::active_key(id))
        .arg(&envelope.internal.request_token)
        .arg("EX")
        .arg(ttl)
        .ignore()
        .zadd(queue, member, deadline)
        .ignore()
        .query_async::<()>(conn)
        .await
        .expect("Go-style submit");
}

/// Go's cancel: the active token becomes the cancel marker for 7 days.
pub async fn go_cancel(conn: &mut MultiplexedConnection, id: &str) {
    let active: String = conn
        .get(wire::active_key(id))
        .await
        .expect("the request's active token");
    let _: () = conn
        .set_ex(wire::cancel_key(id), active, wire::CANCEL_MARKER_TTL_SECS)
        .await
        .expect("Go-style cancel");
}

/// `BRPOP result-list`, as the Go consumer reads results, on a connection of
/// its own; `None` when no record arrives within `wait`.
pub async fn brpop(url: &str, wait: Duration) -> Option<ResultRecord> {
    let mut conn = connect(url).await;
    let popped: Option<(String, Vec<u8>)> = redis::cmd("BRPOP")
        .arg(RESULTS)
        .arg(wait.as_secs_f64())
        .query_async(&mut conn)
        .await
        .expect("BRPOP");
    popped.map(|(_, raw)| parse_record(&raw))
}

pub fn parse_record(raw: &[u8]) -> ResultRecord {
    ResultRecord::from_json(raw).unwrap_or_else(|e| {
        panic!(
            "not a Go-readable result record ({e}): {}",
            String::from_utf8_lossy(raw)
        )
    })
}

/// Every record in the result list, oldest first (the order BRPOP reads them).
pub async fn records(conn: &mut MultiplexedConnection) -> Vec<ResultRecord> {
    records_in(conn, RESULTS).await
}

/// Every record in the result list `list`, oldest first.
pub async fn records_in(conn: &mut MultiplexedConnection, list: &str) -> Vec<ResultRecord> {
    let raw: Vec<Vec<u8>> = conn.lrange(list, 0, -1).await.expect("LRANGE");
    raw.iter().rev().map(|r| parse_record(r)).collect()
}

/// Every record in the result list, after asserting each request id has
/// exactly one; with the ids.
pub async fn records_once_each(
    conn: &mut MultiplexedConnection,
) -> (Vec<ResultRecord>, BTreeSet<String>) {
    let records = records(conn).await;
    let counts = records_per_id(&records);
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n != 1).collect();
    assert!(
        twice.is_empty(),
        "ids with other than one record: {twice:?}"
    );
    (records, counts.into_keys().collect())
}

/// A private server, its URL and a raw connection to it; `None` when the
/// test is skipped (see [`redis_server`]).
pub async fn server_and_conn() -> Option<(RedisServer, String, MultiplexedConnection)> {
    let server = redis_server()?;
    let url = server.url();
    let conn = connect(&url).await;
    Some((server, url, conn))
}

/// How many records each request id has.
pub fn records_per_id(records: &[ResultRecord]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for record in records {
        *counts.entry(record.id.clone()).or_default() += 1;
    }
    counts
}

/// The sizes of every key the claim protocol keeps for [`QUEUE`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Depths {
    pub pending: usize,
    /// `<queue>:claim-owners` entries.
    pub owners: usize,
    /// `<queue>:claimed` entries.
    pub claimed: usize,
    /// `<queue>:claims-idx` entries.
    pub index: usize,
    pub retry: usize,
    pub dead: usize,
    pub results: usize,
}

impl Depths {
    /// No claim bookkeeping left: nothing held by anyone.
    pub fn nothing_claimed(&self) -> bool {
        self.owners == 0 && self.claimed == 0 && self.index == 0
    }
}

pub async fn depths(conn: &mut MultiplexedConnection) -> Depths {
    let (pending, owners, claimed, index, retry, dead, results): (
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
        usize,
    ) = redis::pipe()
        .zcard(QUEUE)
        .hlen(format!("{QUEUE}:claim-owners"))
        .hlen(format!("{QUEUE}:claimed"))
        .zcard(format!("{QUEUE}:claims-idx"))
        .zcard(RETRIES)
        .hlen(format!("{QUEUE}:dead"))
        .llen(RESULTS)
        .query_async(conn)
        .await
        .expect("depths");
    Depths {
        pending,
        owners,
        claimed,
        index,
        retry,
        dead,
        results,
    }
}

/// The request ids of the members in a sorted set (pending or retry).
pub async fn member_ids(conn: &mut MultiplexedConnection, set: &str) -> Vec<String> {
    let members: Vec<Vec<u8>> = conn.zrange(set, 0, -1).await.expect("ZRANGE");
    members
        .iter()
        .map(|m| {
            wire::parse_member(m)
                .unwrap_or_else(|e| panic!("a member in {set} does not parse: {e}"))
                .id
        })
        .collect()
}

/// Polls `done` every 50 ms until it holds; fails naming `what` after `bound`.
pub async fn eventually(what: &str, bound: Duration, mut done: impl AsyncFnMut() -> bool) {
    let started = Instant::now();
    loop {
        if done().await {
            return;
        }
        assert!(
            started.elapsed() < bound,
            "timed out after {bound:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What a finished process printed: its stdout, `between`, then its stderr.
pub fn printed(output: &std::process::Output, between: &str) -> String {
    format!(
        "{}{between}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A loopback port nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    claim_redis::testing::free_port().expect("a free loopback port")
}
