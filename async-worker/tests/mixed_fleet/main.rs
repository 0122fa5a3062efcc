//! A rolling upgrade: our processor binary and a Go-behaving processor drain one queue side by side, each SIGKILLed once mid-run.
//!
//! The Go side (`go_stand_in.rs`) runs as a real process: this test binary
//! re-executes itself with [`GO_ROLE`] set, and the test function, finding
//! it, becomes the Go processor instead of the test. Leases are 3 s on both
//! sides; every wait polls Redis with a bound.

mod go_stand_in;

#[path = "../common/mod.rs"]
mod common;

use async_worker::test_support::gateway::StandInGateway;
use claim_core::wire::{self, Envelope};
use claim_redis::keys::Keys;
use claim_redis::testing::RedisServer;
use claim_redis::testing::go::{self, GoQueue};
use common::stage::{latency_between, stand_in_gateway};
use common::worker::Worker;
use common::{Depths, QUEUE};
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Set (to the Redis URL) in the environment of a re-executed test binary
/// that is to run the Go stand-in.
const GO_ROLE: &str = "MIXED_FLEET_GO_PROCESSOR_REDIS_URL";
/// This test's name, for the re-executed binary's filter.
const TEST: &str = "our_processor_and_a_go_processor_share_a_queue_through_a_kill_of_each_with_one_record_per_request";
const REQUESTS: usize = 400;
const LEASE_S: i64 = 3;

/// The Go side: a process of its own, SIGKILLed on drop.
struct GoProcess(Child);

impl GoProcess {
    fn start(url: &str) -> GoProcess {
        let exe = std::env::current_exe().expect("the test binary's path");
        let child = Command::new(exe)
            .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
            .env(GO_ROLE, url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Go stand-in process");
        GoProcess(child)
    }

    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for GoProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn run_go_role(url: &str) {
    // Never outlive the test that started this process (were it killed).
    let parent = std::os::unix::process::parent_id();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        loop {
            tick.tick().await;
            if std::os::unix::process::parent_id() != parent {
                std::process::exit(0);
            }
        }
    });
    let conn = common::connect(url).await;
    let queue = GoQueue::new(Keys::new("", wire::DEFAULT_RETRY_SET).queue(QUEUE));
    let config = go_stand_in::GoConfig {
        claim_lease_ttl_seconds: LEASE_S,
        poll_interval: Duration::from_millis(100),
        batch_size: 10,
        claim_reclaim_interval: Duration::from_millis(500),
        concurrency: 8,
        work_ms: (150, 400),
    };
    go_stand_in::run(conn, queue, config).await;
}

/// `REQUESTS` requests as the Go producer submits them, with enqueue
/// sequences (so scores carry Go's fraction); returns their ids.
async fn submit(conn: &mut MultiplexedConnection) -> BTreeSet<String> {
    let deadline = common::unix_now() + 600;
    let mut ids = BTreeSet::new();
    for i in 0..REQUESTS {
        let id = format!("r-{i:03}");
        let payload = serde_json::json!({"model": "m", "prompt": id});
        let mut envelope = Envelope::new(&id, common::token(&id), deadline, payload);
        let seq = i64::try_from(i).unwrap() + 1;
        envelope.internal.enqueue_seq = seq;
        let score = wire::queue_score(deadline, Some(seq)).0;
        let _: () = redis::pipe()
            .cmd("SET")
            .arg(wire::active_key(&id))
            .arg(common::token(&id))
            .arg("EX")
            .arg(600)
            .ignore()
            .cmd("ZADD")
            .arg(QUEUE)
            .arg(go::score_text(score))
            .arg(envelope.to_bytes())
            .ignore()
            .query_async(conn)
            .await
            .expect("Go-style submit");
        ids.insert(id);
    }
    ids
}

/// Claim owners by side: (ours, packed `owner|score|n`; Go's, a bare token).
async fn holders(conn: &mut MultiplexedConnection) -> (usize, usize) {
    let owners: Vec<String> = conn
        .hvals(format!("{QUEUE}:claim-owners"))
        .await
        .expect("HVALS");
    let ours = owners.iter().filter(|o| o.contains('|')).count();
    (ours, owners.len() - ours)
}

/// Polls until `done` holds for (depths, our claims, Go's claims).
async fn until(
    conn: &MultiplexedConnection,
    what: &str,
    bound: Duration,
    done: impl Fn(Depths, (usize, usize)) -> bool,
) {
    let mut c = conn.clone();
    common::eventually(what, bound, async || {
        let d = common::depths(&mut c).await;
        let h = holders(&mut c).await;
        done(d, h)
    })
    .await;
}

async fn gateway() -> StandInGateway {
    let latency = latency_between(Duration::from_millis(150), Duration::from_millis(400));
    stand_in_gateway(latency).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_processor_and_a_go_processor_share_a_queue_through_a_kill_of_each_with_one_record_per_request()
 {
    if let Ok(url) = std::env::var(GO_ROLE) {
        run_go_role(&url).await;
        return;
    }
    let Some(server): Option<RedisServer> = common::redis_server() else {
        return;
    };
    let url = server.url();
    let gateway = gateway().await;
    let mut conn = common::connect(&url).await;
    let ids = submit(&mut conn).await;

    let mut ours = Worker::start(&url, &gateway.base_url(), "3s");
    let mut go_side = GoProcess::start(&url);
    until(
        &conn,
        "both sides hold claims",
        Duration::from_secs(30),
        |d, (o, g)| d.results >= 20 && o > 0 && g > 0,
    )
    .await;
    ours.signal("KILL");
    ours.exit_within(Duration::from_secs(5)).await;
    let (held, _) = holders(&mut conn).await;
    // Only Go runs now: Go's reclaimer must return our lapsed claims.
    let bound = Duration::from_secs(20);
    let what = "Go's reclaimer returns our lapsed claims";
    until(&conn, what, bound, |_, (o, _)| o == 0).await;
    let mut ours = Worker::start(&url, &gateway.base_url(), "3s");

    let before = common::depths(&mut conn).await.results;
    let what = "Go holds claims again, later";
    until(&conn, what, Duration::from_secs(30), |d, (_, g)| {
        d.results >= before + 40 && g > 0
    })
    .await;
    go_side.kill();
    let (_, go_held) = holders(&mut conn).await;
    // Only ours runs now: our reclaimer must return Go's lapsed claims (at
    // their members' scores, never to the dead set: checked at the end).
    let what = "our reclaimer returns Go's lapsed claims";
    until(&conn, what, bound, |_, (_, g)| g == 0).await;
    eprintln!("killed holding claims: ours {held}, Go's {go_held}");
    let _go_side = GoProcess::start(&url);

    until(
        &conn,
        "every request answered",
        Duration::from_secs(120),
        |d, _| d.results >= ids.len() && d.pending == 0,
    )
    .await;
    // A lapsed claim left by a kill may still be on its way back: let the
    // reclaimers and both sides settle until nothing is held or pending.
    until(
        &conn,
        "nothing pending or claimed",
        Duration::from_secs(30),
        |d, _| d.pending == 0 && d.nothing_claimed(),
    )
    .await;

    let raw: Vec<Vec<u8>> = conn.lrange(common::RESULTS, 0, -1).await.expect("LRANGE");
    let mut per_id: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut by_go = 0;
    for r in &raw {
        let record: serde_json::Value = serde_json::from_slice(r).expect("a JSON record");
        let id = record["id"]
            .as_str()
            .expect("every record names its id")
            .to_owned();
        let payload = record["payload"].as_str().unwrap_or_default();
        by_go += usize::from(payload.contains("\"go\""));
        if by_go > 0 && payload.contains("\"go\"") {
            assert_eq!(
                record["request_token"].as_str(),
                Some(common::token(&id).as_str()),
                "Go's record carries the generation's token"
            );
        }
        per_id
            .entry(id)
            .or_default()
            .push(String::from_utf8_lossy(r).into_owned());
    }
    let twice: Vec<_> = per_id.iter().filter(|(_, v)| v.len() > 1).collect();
    assert!(
        twice.is_empty(),
        "requests with several records: {twice:#?}"
    );
    let answered: BTreeSet<String> = per_id.into_keys().collect();
    assert_eq!(answered, ids, "every request has exactly one record");
    let d = common::depths(&mut conn).await;
    assert_eq!(
        d,
        Depths {
            results: ids.len(),
            ..Depths::default()
        },
        "nothing pending, claimed, parked or dead"
    );
    assert!(
        by_go > 0 && by_go < ids.len(),
        "both sides answered some: {by_go} of {} by Go",
        ids.len()
    );
    eprintln!("{by_go} of {} answered by the Go side", ids.len());
    ours.signal("TERM");
    ours.exit_within(common::worker::DRAIN + Duration::from_secs(5))
        .await;
}
