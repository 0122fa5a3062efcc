//! `async-worker admin` against real worker processes: requests driven into the dead set are listed with reasons, redriven, purged; exit codes 1 and 2.
//!
//! Workers run with 3 s leases, `--max-deliveries 2` and a 500 ms reclaim
//! interval; every wait polls with a bound.

mod common;

use claim_core::wire::{Envelope, ErrorCode};
use common::QUEUE;
use common::admin::admin;
use common::stage::Stage;
use common::worker::Worker;
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use std::collections::BTreeMap;
use std::time::Duration;

const LEASE: &str = "3s";
const FLAGS: &[&str] = &["--max-deliveries", "2"];
/// The poison requests' result list, a sorted set until the operator fixes it.
const ZSET_LIST: &str = "poison-zset";

/// `ids`, their records aimed at `list`.
async fn submit_to(conn: &mut MultiplexedConnection, ids: &[&str], list: &str) {
    let deadline = common::unix_now() + 600;
    for id in ids {
        let mut envelope = Envelope::new(*id, common::token(id), deadline, serde_json::json!({}));
        envelope.internal.result_queue_name = list.into();
        common::go_submit_envelope(conn, &envelope).await;
    }
}

/// Records in `list` per request id, with each record's error code.
async fn records_in(conn: &mut MultiplexedConnection, list: &str) -> BTreeMap<String, Vec<String>> {
    let raw: Vec<Vec<u8>> = conn.lrange(list, 0, -1).await.unwrap();
    let mut per_id: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in raw {
        let record = common::parse_record(&r);
        let code = record
            .error_code
            .map(|c| c.as_str().to_owned())
            .unwrap_or_default();
        per_id.entry(record.id).or_default().push(code);
    }
    per_id
}

/// Claims whose earlier deliveries number `earlier`: a claim-owners entry
/// is `owner|score|<expired leases before this one>`.
async fn held_after(conn: &mut MultiplexedConnection, earlier: u32) -> usize {
    let owners: Vec<String> = conn.hvals(format!("{QUEUE}:claim-owners")).await.unwrap();
    owners
        .iter()
        .filter(|o| o.rsplit('|').next() == Some(&earlier.to_string()))
        .count()
}

/// `dead redrive --all --json`: each entry's outcome.
fn redrive_all(url: &str) -> Vec<String> {
    let outcomes = admin(url, &["--json", "dead", "redrive", "--all"]).json();
    outcomes
        .as_array()
        .expect("an array of redrive outcomes")
        .iter()
        .map(|m| m["outcome"].as_str().unwrap().to_owned())
        .collect()
}

/// `dead list --json`: request id → reason.
fn dead_list(url: &str) -> BTreeMap<String, String> {
    let rows = admin(url, &["--json", "dead", "list"]).json();
    rows.as_array()
        .expect("an array of dead rows")
        .iter()
        .map(|r| {
            let id = r["id"].as_str().expect("a parsable dead member").to_owned();
            (id, r["reason"].as_str().unwrap().to_owned())
        })
        .collect()
}

#[tokio::test]
async fn requests_whose_result_list_is_not_a_list_are_listed_dead_and_after_the_fix_a_redrive_gets_each_one_record()
 {
    let Some(mut stage) = Stage::answering_after(Duration::from_millis(10)).await else {
        return;
    };
    let _: () = stage.conn.zadd(ZSET_LIST, "occupied", 1).await.unwrap();
    let poisons = ["poison-0", "poison-1", "poison-2"];
    submit_to(&mut stage.conn, &poisons, ZSET_LIST).await;
    let ordinary = common::go_submit_numbered(&mut stage.conn, 5).await;
    let mut worker = Worker::start_with(&stage.url, &stage.gateway.base_url(), LEASE, "5s", FLAGS);

    common::eventually("3 dead, 5 records", Duration::from_secs(30), async || {
        let d = common::depths(&mut stage.conn).await;
        d.dead == 3 && d.results == 5
    })
    .await;
    let dead = dead_list(&stage.url);
    assert_eq!(dead.keys().map(String::as_str).collect::<Vec<_>>(), poisons);
    for reason in dead.values() {
        assert!(reason.contains("\"poison-zset\" holds a zset"), "{reason}");
    }

    // The operator fixes the list, then redrives.
    let _: () = stage.conn.del(ZSET_LIST).await.unwrap();
    assert_eq!(redrive_all(&stage.url), ["moved"; 3]);
    common::eventually(
        "the redriven records",
        Duration::from_secs(15),
        async || records_in(&mut stage.conn, ZSET_LIST).await.len() == 3,
    )
    .await;
    let records = records_in(&mut stage.conn, ZSET_LIST).await;
    assert!(
        records.values().all(|r| r == &[""]),
        "one success each: {records:?}"
    );
    let d = common::depths(&mut stage.conn).await;
    assert!(
        d.dead == 0 && d.pending == 0 && d.nothing_claimed(),
        "{d:?}"
    );
    let counts = common::records_per_id(&common::records(&mut stage.conn).await);
    assert!(counts.values().all(|n| *n == 1) && counts.len() == ordinary.len());
    worker.stop_within(Duration::from_secs(15)).await;
}

#[tokio::test]
async fn requests_past_their_delivery_limit_after_worker_crashes_are_listed_dead_keep_their_one_record_and_purge_needs_yes()
 {
    // Slower than a lease: a worker holds each claim until it is killed.
    let Some(mut stage) = Stage::answering_after(Duration::from_secs(30)).await else {
        return;
    };
    let crashing = ["crash-0", "crash-1"];
    submit_to(&mut stage.conn, &crashing, common::RESULTS).await;
    // Two deliveries, each ended by a SIGKILL while the claims are held.
    for delivery in 0..2 {
        let worker = Worker::start_with(&stage.url, &stage.gateway.base_url(), LEASE, "5s", FLAGS);
        common::eventually("both claimed", Duration::from_secs(20), async || {
            held_after(&mut stage.conn, delivery).await == 2
        })
        .await;
        worker.signal("KILL");
    }
    // A third worker's reclaimer meets the limit.
    let mut worker = Worker::start_with(&stage.url, &stage.gateway.base_url(), LEASE, "5s", FLAGS);
    common::eventually("both dead", Duration::from_secs(20), async || {
        common::depths(&mut stage.conn).await.dead == 2
    })
    .await;
    let dead = dead_list(&stage.url);
    assert_eq!(
        dead.keys().map(String::as_str).collect::<Vec<_>>(),
        crashing
    );
    for reason in dead.values() {
        assert!(
            reason.contains("delivery limit: lease expired 2 times"),
            "{reason}"
        );
    }
    let delivery_limit = ErrorCode::DeliveryLimit.as_str().to_owned();
    let one_each = BTreeMap::from(crashing.map(|id| (id.to_owned(), vec![delivery_limit.clone()])));
    assert_eq!(records_in(&mut stage.conn, common::RESULTS).await, one_each);

    // Their DELIVERY_LIMIT records answered them: a redrive keeps them.
    assert_eq!(redrive_all(&stage.url), ["answered"; 2]);
    assert_eq!(common::depths(&mut stage.conn).await.dead, 2);

    let unconfirmed = admin(&stage.url, &["dead", "purge", "--all"]);
    assert_eq!(unconfirmed.code, 2, "{}", unconfirmed.stderr);
    assert!(
        unconfirmed.stderr.contains("--yes"),
        "{}",
        unconfirmed.stderr
    );
    let purged = admin(&stage.url, &["dead", "purge", "crash-0", "--yes"]);
    assert!(
        purged.ok().contains("deleted 1 dead entries"),
        "{}",
        purged.stdout
    );
    assert_eq!(dead_list(&stage.url).len(), 1);
    assert_eq!(records_in(&mut stage.conn, common::RESULTS).await, one_each);
    worker.stop_within(Duration::from_secs(15)).await;
}

#[tokio::test]
async fn admin_exits_1_when_redis_cannot_be_reached_and_2_on_bad_input() {
    let unreachable = format!("redis://127.0.0.1:{}", common::free_port());
    let down = admin(&unreachable, &["stats"]);
    assert_eq!(down.code, 1, "{}", down.stderr);
    assert!(
        down.stderr.contains("cannot reach Redis"),
        "{}",
        down.stderr
    );

    let Some(server) = common::redis_server() else {
        return;
    };
    let url = server.url();
    for (args, says) in [
        (
            &["pause", "no-such-queue"][..],
            "not in the transport config",
        ),
        (
            &["stats", "--queue", "no-such-queue"][..],
            "not in the transport config",
        ),
        (
            &["dead", "redrive", "no-such-id"][..],
            "no dead entry has id no-such-id",
        ),
        (&["release", "no-such-id"][..], "no claim of request"),
        (&["stats", "--watch", "0s"][..], "zero"),
        (&["dead", "redrive"][..], "--all"),
        (
            &["--transport-config", "{not json", "stats"][..],
            "not valid JSON",
        ),
    ] {
        let ran = admin(&url, args);
        assert_eq!(ran.code, 2, "{args:?}: {}", ran.stderr);
        assert!(ran.stderr.contains(says), "{args:?}: {}", ran.stderr);
    }
    let bad_url = admin("http://not-redis", &["stats"]);
    assert_eq!(bad_url.code, 2, "{}", bad_url.stderr);
    assert_eq!(admin(&url, &["stats"]).code, 0);
}

#[tokio::test]
async fn stats_watch_prints_one_json_document_per_interval_until_interrupted() {
    use tokio::io::AsyncBufReadExt;
    let Some(server) = common::redis_server() else {
        return;
    };
    let mut child = tokio::process::Command::new(common::worker::BINARY)
        .args([
            "admin",
            "--redis-url",
            &server.url(),
            "--json",
            "stats",
            "--watch",
            "200ms",
        ])
        .env_remove("REDIS_URL")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start admin stats --watch");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut documents = 0;
    let read = async {
        while documents < 3 {
            let line = lines.next_line().await.unwrap().expect("another document");
            if line.is_empty() {
                continue;
            }
            let stats: serde_json::Value =
                serde_json::from_str(&line).expect("one JSON document per line");
            assert_eq!(stats[0]["queue"], QUEUE);
            documents += 1;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("three documents within 10 s");
    let pid = child.id().unwrap().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status();
    assert!(sent.unwrap().success());
    let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .expect("exits on SIGINT")
        .unwrap();
    assert!(status.success(), "{status}");
}
