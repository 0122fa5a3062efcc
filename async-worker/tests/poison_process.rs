//! The real binary against poison requests and a Redis that stops: ordinary requests answered once, poison ones dead-lettered, SIGTERM always exits in time.
//!
//! A poison request names a result list that cannot take a record: a sorted
//! set, or the request queue itself. Processes run with 3 s leases,
//! `--max-deliveries 2` and a 5 s drain; every wait polls with a bound, and
//! SIGTERM must end a process within the drain timeout plus 10 s.

mod common;

use async_worker::test_support::gateway::StandInGateway;
use claim_core::wire::Envelope;
use claim_redis::testing::{RedisServer, RedisServerOptions};
use common::QUEUE;
use common::stage::{latency_between, stand_in_gateway};
use common::worker::Worker;
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::{Duration, Instant};

const LEASE: &str = "3s";
/// The bound: SIGTERM exits within the drain timeout plus 10 s.
const EXIT_BOUND: Duration = Duration::from_secs(15);
/// A result list that is a sorted set.
const ZSET_LIST: &str = "poison-zset";
const FLAGS: &[&str] = &["--max-deliveries", "2"];

fn start(server_url: &str, gateway: &StandInGateway) -> Worker {
    Worker::start_with(server_url, &gateway.base_url(), LEASE, "5s", FLAGS)
}

async fn gateway() -> StandInGateway {
    let latency = latency_between(Duration::from_millis(20), Duration::from_millis(80));
    stand_in_gateway(latency).await
}

/// A private server (AOF with fsync always when `aof_always`), the
/// stand-in gateway and a raw connection; `None` when the test is skipped.
async fn fixture(aof_always: bool) -> Option<(RedisServer, StandInGateway, MultiplexedConnection)> {
    let server = common::redis_server_with(RedisServerOptions { aof_always })?;
    let gateway = gateway().await;
    let conn = common::connect(&server.url()).await;
    Some((server, gateway, conn))
}

/// Waits (30 s at most) for the first 20 records, `what` naming the moment.
async fn twenty_records(conn: &MultiplexedConnection, what: &str) {
    let mut watch = conn.clone();
    common::eventually(what, Duration::from_secs(30), async || {
        common::depths(&mut watch).await.results >= 20
    })
    .await;
}

/// Whether both poison requests reached the dead set within 30 s (two
/// deliveries of 3 s leases, reclaimed every 500 ms, plus slack).
async fn both_poisons_dead(conn: &MultiplexedConnection) -> bool {
    let mut watch = conn.clone();
    tokio::time::timeout(Duration::from_secs(30), async {
        while dead(&mut watch).await.len() < 2 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .is_ok()
}

/// Every request in `ids`, and no other, has exactly one record.
async fn assert_one_record_each(conn: &mut MultiplexedConnection, ids: &BTreeSet<String>) {
    let counts = common::records_per_id(&common::records(conn).await);
    assert!(
        counts.values().all(|n| *n == 1),
        "a request got two records"
    );
    assert_eq!(&counts.into_keys().collect::<BTreeSet<_>>(), ids);
}

/// Both poison requests: result list a sorted set, and the queue itself.
const BOTH_POISONS: &[(&str, &str)] = &[("poison-zset", ZSET_LIST), ("poison-queue", QUEUE)];

/// Ordinary requests `r-000`.. and the two poison ones; returns the ordinary ids.
async fn submit(conn: &mut MultiplexedConnection, n: usize) -> BTreeSet<String> {
    submit_with(conn, n, BOTH_POISONS).await
}

/// Ordinary requests `r-000`.. and `poisons` (id, result list); returns the ordinary ids.
async fn submit_with(
    conn: &mut MultiplexedConnection,
    n: usize,
    poisons: &[(&str, &str)],
) -> BTreeSet<String> {
    let deadline = common::unix_now() + 600;
    let _: () = conn.zadd(ZSET_LIST, "occupied", 1).await.unwrap();
    for &(id, list) in poisons {
        let mut envelope = Envelope::new(id, common::token(id), deadline, serde_json::json!({}));
        envelope.internal.result_queue_name = list.into();
        common::go_submit_envelope(conn, &envelope).await;
    }
    common::go_submit_numbered(conn, n).await
}

/// Dead-lettered members by request id, with their reasons.
async fn dead(conn: &mut MultiplexedConnection) -> BTreeMap<String, String> {
    let entries: BTreeMap<Vec<u8>, String> = conn.hgetall(format!("{QUEUE}:dead")).await.unwrap();
    entries
        .into_iter()
        .map(|(member, why)| {
            let id = claim_core::wire::parse_member(&member)
                .map(|m| m.id)
                .unwrap_or_else(|_| String::from_utf8_lossy(&member).into_owned());
            (id, why)
        })
        .collect()
}

/// Waits for a record per ordinary request (poison ones never get one here).
async fn wait_for_ordinary(conn: &MultiplexedConnection, ids: &BTreeSet<String>, bound: Duration) {
    let mut conn = conn.clone();
    common::eventually("a record per ordinary request", bound, async || {
        assert_queue_is_a_sorted_set(&mut conn).await;
        let answered: BTreeSet<String> = common::records_per_id(&common::records(&mut conn).await)
            .into_keys()
            .collect();
        ids.is_subset(&answered)
    })
    .await;
}

/// The queue key is a sorted set (or absent). A record pushed to a result
/// list named like the queue while the queue was empty would have made it
/// a list (awaits the store side: the ack must dead-letter such a request).
async fn assert_queue_is_a_sorted_set(conn: &mut MultiplexedConnection) {
    let kind: String = redis::cmd("TYPE")
        .arg(QUEUE)
        .query_async(conn)
        .await
        .unwrap();
    assert!(
        kind == "zset" || kind == "none",
        "the queue key now holds a {kind}: a record was pushed to the queue itself"
    );
}

/// SIGTERM, and the exit within the bound with code 0.
async fn sigterm_exits_in_time(worker: &mut Worker) {
    worker.signal("TERM");
    let signalled = Instant::now();
    let status = worker.exit_within(EXIT_BOUND).await;
    eprintln!("SIGTERM to exit: {:?}", signalled.elapsed());
    assert_eq!(status.code(), Some(0), "log tail:\n{}", worker.log_tail());
}

/// Every ordinary request has exactly one record; the poison ones are in
/// the dead set with a reason naming their list; nothing is claimed.
async fn assert_final_state(conn: &mut MultiplexedConnection, ids: &BTreeSet<String>) {
    assert_queue_is_a_sorted_set(conn).await;
    let counts = common::records_per_id(&common::records(conn).await);
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "requests with several records: {twice:?}");
    let answered: BTreeSet<String> = counts.into_keys().collect();
    assert_eq!(
        &answered, ids,
        "every ordinary request answered, nothing else"
    );
    let d = common::depths(conn).await;
    assert_eq!(d.pending, 0, "nothing left pending: {d:?}");
    // Awaits the store side (issue 9, item 1): the ack dead-letters a
    // request whose result list cannot take a record.
    let dead = dead(conn).await;
    let poison: BTreeSet<&str> = dead.keys().map(String::as_str).collect();
    assert_eq!(
        poison,
        BTreeSet::from(["poison-queue", "poison-zset"]),
        "both poison requests dead-lettered: {dead:?}"
    );
    assert!(d.nothing_claimed(), "claims left: {d:?}");
}

/// The process id of a redis-server, from `INFO server`.
async fn redis_pid(conn: &mut MultiplexedConnection) -> u32 {
    let info: redis::InfoDict = redis::cmd("INFO")
        .arg("server")
        .query_async(conn)
        .await
        .unwrap();
    info.get("process_id").expect("process_id in INFO server")
}

fn signal_pid(pid: u32, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poison_requests_and_one_of_two_replicas_sigkilled_end_with_ordinary_answered_once_poison_dead_and_sigterm_in_time()
 {
    let Some((server, gateway, mut conn)) = fixture(false).await else {
        return;
    };
    let ids = submit(&mut conn, 150).await;
    let mut doomed = start(&server.url(), &gateway);
    let mut survivor = start(&server.url(), &gateway);
    twenty_records(&conn, "records while both run").await;
    doomed.signal("KILL");
    doomed.exit_within(Duration::from_secs(5)).await;
    wait_for_ordinary(&conn, &ids, Duration::from_secs(60)).await;
    let poison_settled = Instant::now();
    let settled = both_poisons_dead(&conn).await;
    eprintln!(
        "poison dead-lettered: {settled} after {:?}",
        poison_settled.elapsed()
    );
    sigterm_exits_in_time(&mut survivor).await;
    assert_final_state(&mut conn, &ids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redis_down_for_ten_seconds_mid_run_nothing_is_lost_poison_ends_dead_and_sigterm_exits_in_time()
 {
    let Some((mut server, gateway, mut conn)) = fixture(true).await else {
        return;
    };
    let ids = submit(&mut conn, 150).await;
    let mut first = start(&server.url(), &gateway);
    let mut second = start(&server.url(), &gateway);
    twenty_records(&conn, "records before the outage").await;
    server.kill();
    tokio::time::sleep(Duration::from_secs(10)).await;
    server.restart().expect("restart redis-server on its data");
    let mut conn = common::connect(&server.url()).await;
    wait_for_ordinary(&conn, &ids, Duration::from_secs(60)).await;
    let settled = both_poisons_dead(&conn).await;
    eprintln!("poison dead-lettered after the outage: {settled}");
    sigterm_exits_in_time(&mut first).await;
    sigterm_exits_in_time(&mut second).await;
    assert_final_state(&mut conn, &ids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_while_redis_is_frozen_exits_within_the_bound_and_a_second_process_answers_everything()
 {
    let Some((server, gateway, mut conn)) = fixture(false).await else {
        return;
    };
    let mut ids = BTreeSet::new();
    let deadline = common::unix_now() + 600;
    for i in 0..200 {
        let id = format!("r-{i:03}");
        common::go_submit(&mut conn, &id, deadline, serde_json::json!({"prompt": id})).await;
        ids.insert(id);
    }
    let pid = redis_pid(&mut conn).await;
    let mut worker = start(&server.url(), &gateway);
    let mut watch = conn.clone();
    common::eventually("records and claims", Duration::from_secs(30), async || {
        let d = common::depths(&mut watch).await;
        d.results >= 20 && d.owners > 0
    })
    .await;
    // A frozen server accepts connections and never answers: every call
    // runs into its timeout, the slowest failure there is.
    assert_eq!(worker.health_status("/readyz").await, 200);
    signal_pid(pid, "STOP");
    let frozen = Instant::now();
    common::eventually(
        "/readyz 503 with Redis frozen",
        Duration::from_secs(8),
        async || worker.health_status("/readyz").await == 503,
    )
    .await;
    eprintln!("/readyz turned 503 {:?} after the freeze", frozen.elapsed());
    assert_eq!(worker.health_status("/healthz").await, 200, "still alive");
    worker.signal("TERM");
    let signalled = Instant::now();
    let status = worker.exit_within(EXIT_BOUND).await;
    let took = signalled.elapsed();
    signal_pid(pid, "CONT");
    eprintln!("SIGTERM to exit with Redis frozen: {took:?}");
    assert_eq!(status.code(), Some(0), "log tail:\n{}", worker.log_tail());

    let mut second = start(&server.url(), &gateway);
    let mut watch = conn.clone();
    common::eventually("every record", Duration::from_secs(60), async || {
        common::depths(&mut watch).await.results >= ids.len()
    })
    .await;
    sigterm_exits_in_time(&mut second).await;
    assert_one_record_each(&mut conn, &ids).await;
    let d = common::depths(&mut conn).await;
    assert!(d.nothing_claimed() && d.pending == 0, "{d:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_list_that_is_a_sorted_set_holds_up_no_ordinary_request_and_sigterm_exits_in_time()
{
    let Some((server, gateway, mut conn)) = fixture(false).await else {
        return;
    };
    let ids = submit_with(&mut conn, 150, &[("poison-zset", ZSET_LIST)]).await;
    let mut worker = start(&server.url(), &gateway);
    let began = Instant::now();
    wait_for_ordinary(&conn, &ids, Duration::from_secs(30)).await;
    eprintln!(
        "150 ordinary records beside a poison request in {:?}",
        began.elapsed()
    );
    sigterm_exits_in_time(&mut worker).await;
    assert_one_record_each(&mut conn, &ids).await;
    let zset: usize = conn.zcard(ZSET_LIST).await.unwrap();
    assert_eq!(zset, 1, "the sorted set is untouched");
}
