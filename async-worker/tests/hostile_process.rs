//! The real binary against members written to hurt, beside ordinary requests and parked retries, with one of two replicas SIGKILLed: every ordinary request answered once, no key a member named deleted or changed, every hostile member ended once.
//!
//! Whoever can `ZADD` to a queue chooses every byte of a member. The
//! hostile members here are the ones docs/RELIABILITY.md ("Hostile input")
//! lists: payload references naming the queue, the retry set, the result
//! list or another request's payload; an id and token built to meet the
//! claim script's internal placeholder; deadlines and scores out of range;
//! odd bytes in ids; result lists naming internal keys or, with the
//! allow-list on, another fleet's queue. Processes run with 3 s leases,
//! `--max-deliveries 2`, a 5 s drain and `allowed_result_lists`; every wait
//! polls with a bound.

mod common;

use async_worker::test_support::gateway::{GatewayBehaviour, StandInGateway};
use claim_core::wire::{self, Envelope, ErrorCode};
use common::worker::Worker;
use common::{QUEUE, RESULTS, RETRIES};
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// The bound: SIGTERM exits within the drain timeout plus 10 s.
const EXIT_BOUND: Duration = Duration::from_secs(15);
/// Another request's payload, which a hostile member names as its own.
const OTHER_PAYLOAD: &str = "request-payload:someone-else:their-token";
/// Another fleet's queue, which the allow-list keeps records out of.
const OTHER_FLEET_QUEUE: &str = "other-fleet-queue";

/// How a hostile member must end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// One record with this error code.
    Record(ErrorCode),
    /// One ordinary (handler) record: the member is odd, not wrong.
    Answered,
    /// The dead set, with a reason holding this text, and no record.
    Dead(&'static str),
}

/// One hostile member: its id (as the dead set or the record shows it),
/// its bytes, its score as ZADD text, and how it must end.
struct Hostile {
    id: String,
    member: Vec<u8>,
    score: String,
    end: End,
}

fn deadline() -> i64 {
    common::unix_now() + 600
}

/// A member in the Go producer's shape with `internal` and `data` as given.
fn shaped(internal: serde_json::Value, data: serde_json::Value) -> Vec<u8> {
    serde_json::json!({"internal": internal, "request_kind": "redis", "data": data})
        .to_string()
        .into_bytes()
}

/// By reference (`"payload":null`) with `internal.payload_ref` naming `key`.
fn naming_as_payload(id: &str, key: &str) -> Hostile {
    let member = shaped(
        serde_json::json!({"request_token": common::token(id), "payload_ref": key}),
        serde_json::json!({"id": id, "deadline": deadline(), "payload": null}),
    );
    hostile(id, member, End::Record(ErrorCode::InvalidRequest))
}

/// An ordinary member with one `internal` field set to `value`.
fn with_internal(id: &str, field: &str, value: serde_json::Value, end: End) -> Hostile {
    let mut internal = serde_json::json!({"request_token": common::token(id)});
    internal[field] = value;
    let member = shaped(
        internal,
        serde_json::json!({"id": id, "deadline": deadline(), "payload": {"prompt": id}}),
    );
    hostile(id, member, end)
}

/// Request `id` whose record is aimed at `list` (`internal.result_queue_name`).
fn aimed_at(id: &str, list: &str, end: End) -> Hostile {
    with_internal(id, "result_queue_name", list.into(), end)
}

fn hostile(id: &str, member: Vec<u8>, end: End) -> Hostile {
    Hostile {
        id: id.to_owned(),
        member,
        score: deadline().to_string(),
        end,
    }
}

fn scored(mut h: Hostile, score: &str) -> Hostile {
    h.score = score.to_owned();
    h
}

/// Every hostile member of the issue, and a few more of the same kinds.
fn hostiles() -> Vec<Hostile> {
    let invalid = End::Record(ErrorCode::InvalidRequest);
    let ordinary = |id: &str| with_internal(id, "retry_count", 0.into(), End::Answered);
    let huge = "9223372036854775807";
    // Built to make `<id>\0<token>` equal the claim script's placeholder;
    // no request_kind, so the member is read leniently.
    let placeholder = serde_json::json!({
        "internal": {"request_token": "\u{0}claim-redis encoding hint: never a claim key, longer than 64 bytes~"},
        "data": {"id": "~", "deadline": deadline(), "payload": {}},
    });
    let max_deadline = serde_json::json!({
        "internal": {"request_token": "t"}, "request_kind": "redis",
        "data": {"id": "h-deadline-max", "deadline": i64::MAX, "payload": {}},
    });
    vec![
        naming_as_payload("h-payload-queue", QUEUE),
        naming_as_payload("h-payload-retry", RETRIES),
        naming_as_payload("h-payload-results", RESULTS),
        naming_as_payload("h-payload-claimed", &format!("{QUEUE}:claimed")),
        naming_as_payload("h-payload-other", OTHER_PAYLOAD),
        hostile(
            "~",
            placeholder.to_string().into_bytes(),
            End::Dead("NUL byte"),
        ),
        scored(
            hostile(
                "h-deadline-max",
                max_deadline.to_string().into_bytes(),
                invalid,
            ),
            huge,
        ),
        scored(ordinary("h-score-inf"), "+inf"),
        scored(ordinary("h-score-huge"), huge),
        scored(ordinary("h-score-minus-inf"), "-inf"),
        scored(ordinary("h-score-zero"), "0"),
        scored(ordinary("h-score-negative"), "-9223372036854775807"),
        hostile(
            "h-ttl-huge",
            shaped(
                serde_json::json!({"request_token": "t", "result_routing_resolved": true,
                    "result_queue_name": RESULTS, "result_ttl_seconds": u64::MAX}),
                serde_json::json!({"id": "h-ttl-huge", "deadline": deadline(), "payload": {}}),
            ),
            invalid,
        ),
        with_internal("h-retry-huge", "retry_count", 1e30.into(), invalid),
        with_internal("h-retry-max", "retry_count", u32::MAX.into(), End::Answered),
        with_internal("h-seq-min", "enqueue_seq", i64::MIN.into(), End::Answered),
        with_internal("h-seq-max", "enqueue_seq", i64::MAX.into(), End::Answered),
        ordinary("h-{braces}}{"),
        ordinary(&format!("h-long-{}", "x".repeat(5000))),
        aimed_at("h-list-queue", QUEUE, End::Dead("pending set")),
        aimed_at(
            "h-list-claimed",
            &format!("{QUEUE}:claimed"),
            End::Dead("claimed key"),
        ),
        aimed_at("h-list-retry", RETRIES, End::Dead("retry set")),
        hostile(
            "not json {",
            b"not json {".to_vec(),
            End::Dead("not a JSON object"),
        ),
        // Another fleet's queue, empty now: an LPUSH would make it a list.
        aimed_at(
            "h-list-other-fleet",
            OTHER_FLEET_QUEUE,
            End::Dead("is not allowed"),
        ),
    ]
}

async fn zadd_raw(conn: &mut MultiplexedConnection, key: &str, score: &str, member: &[u8]) {
    let _: () = redis::cmd("ZADD")
        .arg(key)
        .arg(score)
        .arg(member)
        .query_async(conn)
        .await
        .unwrap_or_else(|e| panic!("ZADD {key} {score}: {e}"));
}

/// `n` retries parked as a Go processor parks them: stamped for [`QUEUE`],
/// due in `due_in` seconds. Returns their ids.
async fn park_retries(conn: &mut MultiplexedConnection, n: usize, due_in: i64) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for i in 0..n {
        let id = format!("parked-{i:02}");
        let envelope = Envelope::new(&id, common::token(&id), deadline(), serde_json::json!({}));
        let member = wire::stamp_retry(&envelope.to_bytes(), QUEUE).expect("stamp a retry");
        let due = (common::unix_now() + due_in).to_string();
        zadd_raw(conn, RETRIES, &due, &member).await;
        ids.insert(id);
    }
    ids
}

async fn key_type(conn: &mut MultiplexedConnection, key: &str) -> String {
    redis::cmd("TYPE").arg(key).query_async(conn).await.unwrap()
}

/// Dead-lettered members by request id (the raw bytes when unparsable), with their reasons.
async fn dead(conn: &mut MultiplexedConnection) -> BTreeMap<String, String> {
    let entries: BTreeMap<Vec<u8>, String> = conn.hgetall(format!("{QUEUE}:dead")).await.unwrap();
    entries
        .into_iter()
        .map(|(member, why)| {
            let id = serde_json::from_slice::<serde_json::Value>(&member)
                .ok()
                .and_then(|v| v["data"]["id"].as_str().map(str::to_owned))
                .unwrap_or_else(|| String::from_utf8_lossy(&member).into_owned());
            (id, why)
        })
        .collect()
}

/// A replica with the allow-list on: only the default list and `tenant-*`.
async fn start(server_url: &str, gateway: &StandInGateway) -> Worker {
    let config = serde_json::json!({
        "allowed_result_lists": [RESULTS, "tenant-*"],
        "queues": [{"queue_name": QUEUE, "igw_base_url": gateway.base_url()}],
    })
    .to_string();
    let flags = ["--max-deliveries", "2", "--transport-config", &config];
    Worker::start_with(server_url, &gateway.base_url(), "3s", "5s", &flags)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_members_beside_ordinary_requests_and_parked_retries_with_a_replica_sigkilled_touch_nothing_else_and_end_once()
 {
    let Some(server) = common::redis_server() else {
        return;
    };
    let gateway =
        StandInGateway::start(GatewayBehaviour::answering_after(Duration::from_millis(30)))
            .await
            .expect("start the stand-in gateway");
    let mut conn = common::connect(&server.url()).await;
    let _: () = conn.set(OTHER_PAYLOAD, "{}").await.unwrap();
    let hostiles = hostiles();
    for h in &hostiles {
        zadd_raw(&mut conn, QUEUE, &h.score, &h.member).await;
    }
    let mut ordinary = common::go_submit_numbered(&mut conn, 400).await;
    ordinary.extend(park_retries(&mut conn, 20, 6).await);

    let mut doomed = start(&server.url(), &gateway).await;
    let mut survivor = start(&server.url(), &gateway).await;
    let mut watch = conn.clone();
    common::eventually(
        "records while both run",
        Duration::from_secs(30),
        async || common::depths(&mut watch).await.results >= 20,
    )
    .await;
    doomed.signal("KILL");
    doomed.exit_within(Duration::from_secs(5)).await;

    let expected_records: BTreeSet<String> = ordinary
        .iter()
        .cloned()
        .chain(
            hostiles
                .iter()
                .filter(|h| !matches!(h.end, End::Dead(_)))
                .map(|h| h.id.clone()),
        )
        .collect();
    let expected_dead = hostiles
        .iter()
        .filter(|h| matches!(h.end, End::Dead(_)))
        .count();
    let began = Instant::now();
    common::eventually(
        "every record and dead entry",
        Duration::from_secs(90),
        async || {
            let answered: BTreeSet<String> =
                common::records_per_id(&common::records(&mut watch).await)
                    .into_keys()
                    .collect();
            expected_records.is_subset(&answered) && dead(&mut watch).await.len() >= expected_dead
        },
    )
    .await;
    eprintln!("everything ended {:?} after the kill", began.elapsed());

    survivor.signal("TERM");
    let signalled = Instant::now();
    let status = survivor.exit_within(EXIT_BOUND).await;
    eprintln!("SIGTERM to exit: {:?}", signalled.elapsed());
    assert_eq!(status.code(), Some(0), "log tail:\n{}", survivor.log_tail());

    // No key a member named was deleted or changed type.
    for (key, kind) in [
        (QUEUE, "none"),
        (RETRIES, "none"),
        (RESULTS, "list"),
        (OTHER_PAYLOAD, "string"),
        (OTHER_FLEET_QUEUE, "none"),
    ] {
        let got = key_type(&mut conn, key).await;
        assert!(
            got == kind || (kind == "none" && got == "zset" && key != OTHER_FLEET_QUEUE),
            "{key} is now a {got}"
        );
    }
    let other: Option<String> = conn.get(OTHER_PAYLOAD).await.unwrap();
    assert_eq!(
        other.as_deref(),
        Some("{}"),
        "another request's payload is untouched"
    );
    for key in [format!("{QUEUE}:claimed"), format!("{QUEUE}:claim-owners")] {
        let got = key_type(&mut conn, &key).await;
        assert!(got == "hash" || got == "none", "{key} is now a {got}");
    }

    let records = common::records(&mut conn).await;
    let counts = common::records_per_id(&records);
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "requests with several records: {twice:?}");
    assert_eq!(
        counts.keys().cloned().collect::<BTreeSet<_>>(),
        expected_records,
        "every ordinary request and every hostile one meant to get a record, nothing else"
    );
    let by_id: BTreeMap<&str, &wire::ResultRecord> =
        records.iter().map(|r| (r.id.as_str(), r)).collect();
    let dead = dead(&mut conn).await;
    for h in &hostiles {
        match h.end {
            End::Record(code) => {
                assert_eq!(by_id[h.id.as_str()].error_code, Some(code), "{}", h.id);
            }
            End::Answered => {
                let r = by_id[h.id.as_str()];
                assert_eq!(
                    (r.error_code, r.status_code),
                    (None, Some(200)),
                    "{}",
                    &h.id[..h.id.len().min(40)]
                );
            }
            End::Dead(why) => {
                let reason = dead
                    .get(&h.id)
                    .unwrap_or_else(|| panic!("{:?} not in the dead set: {dead:?}", h.id));
                assert!(reason.contains(why), "{:?}: {reason}", h.id);
            }
        }
    }
    assert_eq!(
        dead.len(),
        expected_dead,
        "only the members meant for it are dead: {dead:?}"
    );
    let d = common::depths(&mut conn).await;
    assert!(d.nothing_claimed(), "claims left: {d:?}");
    assert_eq!((d.pending, d.retry), (0, 0), "{d:?}");
}
