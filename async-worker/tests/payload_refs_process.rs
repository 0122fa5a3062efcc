//! Two real `async-worker` processes against Go-format submits with payloads stored apart (some missing), enqueue sequences and resubmissions, one of them SIGKILLed mid-run: one record per generation, each with its token, and no payload key left.
//!
//! The producer here is written from the shared file's facts (§2, §3), with
//! raw commands: `INCR request-seq:<queue>:<deadline>`, the sequence
//! stamped into the member, then one MULTI that sets the seq key's expiry,
//! clears the cancel marker, marks the token active, stores the payload at
//! `request-payload:<id>:<token>` (deadline + 10 min) and ZADDs the member at
//! `deadline + seq / 2^21`.

mod common;

use async_worker::test_support::gateway::{GatewayBehaviour, StandInGateway};
use claim_core::wire::{self, Envelope, ErrorCode, ResultRecord};
use common::QUEUE;
use common::worker::Worker;
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const LEASE: &str = "3s";
/// The list a few members route to themselves (resolved routing, with a TTL).
const ROUTED: &str = "routed-results";
const ROUTED_TTL_SECS: i64 = 900;
/// Requests in the first wave; a tenth miss their payload, a tenth are inline.
const FIRST_WAVE: usize = 200;
/// Ids submitted again, with a new token, while the run goes on.
const RESUBMITTED: usize = 30;

/// A generation the test submitted, and what its record must say.
#[derive(Debug, Clone)]
struct Sent {
    id: String,
    token: String,
    /// The payload bytes the gateway must receive; `None`: stored apart and missing.
    payload: Option<Vec<u8>>,
    list: &'static str,
}

/// A 32-hex request token, new per submit as Go's producer makes them.
fn new_token() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// Submits `envelope` as Go's producer does under `WithPayloadKeys` (or
/// inline when `apart` is false); `store_payload` false leaves the payload
/// key unwritten (expired, or lost). Returns what was sent.
async fn go_submit(
    conn: &mut MultiplexedConnection,
    envelope: Envelope,
    apart: bool,
    store_payload: bool,
    list: &'static str,
) -> Sent {
    let id = envelope.data.id.clone();
    let token = envelope.internal.request_token.clone();
    let deadline = envelope.data.deadline;
    let (envelope, stored) = if apart {
        let (envelope, bytes) = envelope.by_reference();
        (envelope, Some(bytes))
    } else {
        let inline = inline_payload(&envelope);
        (envelope, Some(inline))
    };
    let seq_key = wire::seq_key(QUEUE, deadline);
    let seq: i64 = conn.incr(&seq_key, 1).await.expect("INCR the sequence");
    let member = wire::seq_template(&envelope.to_bytes())
        .expect("a Go member")
        .stamp(seq);
    let score = wire::queue_score(deadline, Some(seq)).0;
    let ms_left = ((deadline - common::unix_now()) * 1000).max(1);
    let mut pipe = redis::pipe();
    pipe.atomic()
        .cmd("EXPIREAT")
        .arg(&seq_key)
        .arg(deadline + wire::SEQ_GRACE_SECS)
        .ignore()
        .del(wire::cancel_key(&id))
        .ignore()
        .cmd("SET")
        .arg(wire::active_key(&id))
        .arg(&token)
        .arg("PX")
        .arg(ms_left)
        .ignore();
    if apart && store_payload {
        pipe.cmd("SET")
            .arg(&envelope.internal.payload_ref)
            .arg(stored.as_deref().unwrap_or_default())
            .arg("PX")
            .arg(ms_left as u64 + wire::PAYLOAD_GRACE_MS)
            .ignore();
    }
    pipe.zadd(QUEUE, member, score).ignore();
    pipe.query_async::<()>(conn).await.expect("Go-style submit");
    let payload = if apart && !store_payload {
        None
    } else {
        stored
    };
    Sent {
        id,
        token,
        payload,
        list,
    }
}

/// The request `id` with a payload of its own size, deadline ten minutes out.
fn envelope(id: &str, n: usize) -> Envelope {
    let deadline = common::unix_now() + 600;
    let payload = serde_json::json!({"model": "m", "prompt": id, "pad": "x".repeat(n % 97)});
    Envelope::new(id, new_token(), deadline, payload)
}

/// The first wave: a tenth inline, a tenth missing their payload, a few
/// routing themselves to [`ROUTED`] with a TTL, the rest stored apart.
async fn first_wave(conn: &mut MultiplexedConnection) -> Vec<Sent> {
    let mut sent = Vec::new();
    for n in 0..FIRST_WAVE {
        let id = format!("r-{n:03}");
        let mut envelope = envelope(&id, n);
        let (apart, store_payload, list) = match n % 10 {
            0 => (false, true, common::RESULTS),
            1 => (true, false, common::RESULTS),
            2 if n % 20 == 2 => {
                envelope.internal.result_queue_name = ROUTED.into();
                envelope.internal.result_ttl_seconds = ROUTED_TTL_SECS;
                envelope.internal.result_routing_resolved = true;
                (true, true, ROUTED)
            }
            _ => (true, true, common::RESULTS),
        };
        sent.push(go_submit(conn, envelope, apart, store_payload, list).await);
    }
    sent
}

/// Every record in `list`, oldest first.
async fn records_in(conn: &mut MultiplexedConnection, list: &str) -> Vec<ResultRecord> {
    let raw: Vec<Vec<u8>> = conn.lrange(list, 0, -1).await.expect("LRANGE");
    raw.iter().rev().map(|r| common::parse_record(r)).collect()
}

/// Records by generation (id, token) across both lists, with the list each is in.
async fn records_by_generation(
    conn: &mut MultiplexedConnection,
) -> BTreeMap<(String, String), Vec<(&'static str, ResultRecord)>> {
    let mut out: BTreeMap<_, Vec<_>> = BTreeMap::new();
    for list in [common::RESULTS, ROUTED] {
        for record in records_in(conn, list).await {
            let key = (
                record.id.clone(),
                record.request_token.clone().unwrap_or_default(),
            );
            out.entry(key).or_default().push((list, record));
        }
    }
    out
}

/// The `request-payload:` keys left in the server.
async fn payload_keys(conn: &mut MultiplexedConnection) -> Vec<String> {
    let pattern = format!("{}*", wire::PAYLOAD_KEY_PREFIX);
    conn.keys(pattern).await.expect("KEYS")
}

/// The prompt tokens the stand-in gateway counted: the body's length in bytes.
fn prompt_bytes(record: &ResultRecord) -> Option<usize> {
    let body: serde_json::Value = serde_json::from_str(&record.payload).ok()?;
    body["usage"]["prompt_tokens"].as_u64().map(|n| n as usize)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_submits_by_reference_with_resubmissions_end_in_one_record_per_generation_with_its_token_through_a_sigkill()
 {
    let Some(server) = common::redis_server() else {
        return;
    };
    let gateway = StandInGateway::start(GatewayBehaviour {
        min_latency: Duration::from_millis(30),
        max_latency: Duration::from_millis(120),
        ..GatewayBehaviour::default()
    })
    .await
    .expect("start the stand-in gateway");
    let url = server.url();
    let mut conn = common::connect(&url).await;
    let mut sent = first_wave(&mut conn).await;

    let mut doomed = Worker::start(&url, &gateway.base_url(), LEASE);
    let mut survivor = Worker::start(&url, &gateway.base_url(), LEASE);
    let mut watch = conn.clone();
    common::eventually("40 records", Duration::from_secs(30), async || {
        common::depths(&mut watch).await.results >= 40
    })
    .await;
    // Resubmit ids from both ends of the queue: some already answered, some
    // still pending (then both generations run and each gets its record).
    for n in (0..RESUBMITTED / 2).chain(FIRST_WAVE - RESUBMITTED / 2..FIRST_WAVE) {
        let id = format!("r-{n:03}");
        sent.push(go_submit(&mut conn, envelope(&id, n + 1), true, true, common::RESULTS).await);
    }
    common::eventually(
        "work in flight on both",
        Duration::from_secs(30),
        async || common::depths(&mut watch).await.owners > 0,
    )
    .await;
    let at_kill = common::depths(&mut conn).await;
    doomed.signal("KILL");
    doomed.exit_within(Duration::from_secs(5)).await;
    eprintln!("at the SIGKILL: {at_kill:?}");

    let generations: BTreeSet<(String, String)> = sent
        .iter()
        .map(|s| (s.id.clone(), s.token.clone()))
        .collect();
    assert_eq!(
        generations.len(),
        sent.len(),
        "every submit is a new generation"
    );
    common::eventually(
        "a record per generation",
        Duration::from_secs(90),
        async || records_by_generation(&mut watch).await.len() >= generations.len(),
    )
    .await;
    survivor.signal("TERM");
    let status = survivor
        .exit_within(common::worker::DRAIN + Duration::from_secs(5))
        .await;
    assert_eq!(status.code(), Some(0), "log tail:\n{}", survivor.log_tail());

    assert!(
        at_kill.results < generations.len(),
        "work was left when one replica died: {at_kill:?}"
    );
    let records = records_by_generation(&mut conn).await;
    let twice: Vec<_> = records.iter().filter(|(_, r)| r.len() > 1).collect();
    assert!(
        twice.is_empty(),
        "generations with several records: {twice:?}"
    );
    assert_eq!(
        records.keys().cloned().collect::<BTreeSet<_>>(),
        generations,
        "every generation has a record carrying its token, and only those"
    );
    for s in &sent {
        let (list, record) = &records[&(s.id.clone(), s.token.clone())][0];
        assert_eq!(*list, s.list, "{} routed to {}", s.id, s.list);
        match &s.payload {
            None => {
                assert_eq!(
                    record.error_code,
                    Some(ErrorCode::PayloadUnavailable),
                    "{s:?}"
                );
                assert_eq!(
                    record.error_message.as_deref(),
                    Some(wire::PAYLOAD_MISSING_MESSAGE)
                );
            }
            Some(payload) => {
                assert_eq!(record.status_code, Some(200), "{}: {record:?}", s.id);
                assert_eq!(
                    prompt_bytes(record),
                    Some(payload.len()),
                    "{}: the gateway got the payload",
                    s.id
                );
            }
        }
    }
    let ttl: i64 = conn.ttl(ROUTED).await.expect("TTL");
    assert!(
        ttl > 0 && ttl <= ROUTED_TTL_SECS,
        "the routed list expires as its members asked: TTL {ttl}"
    );
    let results_ttl: i64 = conn.ttl(common::RESULTS).await.expect("TTL");
    assert_eq!(results_ttl, -1, "no TTL configured for the default list");
    assert_eq!(
        payload_keys(&mut conn).await,
        Vec::<String>::new(),
        "no payload key left for an answered request"
    );
    let d = common::depths(&mut conn).await;
    assert!(d.nothing_claimed(), "claims left: {d:?}");
    assert_eq!((d.pending, d.retry, d.dead), (0, 0, 0), "{d:?}");
}

/// The payload bytes of an inline member, as Go's producer wrote them.
fn inline_payload(envelope: &Envelope) -> Vec<u8> {
    let member = wire::parse_member(&envelope.to_bytes()).expect("a Go member");
    member.payload.get().as_bytes().to_vec()
}
