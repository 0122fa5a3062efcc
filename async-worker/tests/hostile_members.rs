//! The runtime on the memory store, in tokio's paused time, against members written to hurt: payload references naming other keys, and arbitrary member bytes (a proptest) beside ordinary requests.
//!
//! What every case asserts: each ordinary request gets exactly one record,
//! no generation gets two, every member ends (a record or the dead set),
//! nothing is left pending or claimed, and no payload but a member's own
//! is read or deleted.

use async_worker::{QueueSpec, Runtime};
use claim_core::ListReads;
use claim_core::store::Submission;
use claim_core::wire::{self, ErrorCode, ResultRecord};
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, Generation, Member};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

#[path = "common/faulty.rs"]
mod faulty;
#[path = "common/memory_rig.rs"]
mod rig;

use rig::{A, RESULTS, START, Setup};

/// A list hostile members may name; the runtime must keep records there apart.
const OTHER_LIST: &str = "someone-elses-list";
/// Another request's payload, stored apart.
const OTHER_PAYLOAD: &str = "request-payload:other:tok-other";

fn deadline_in(secs: i64) -> i64 {
    (START.0 / 1000) as i64 + secs
}

/// Submits raw member bytes as a producer with ZADD rights would: at the
/// given deadline's score, under a generation of its own for the
/// producer's keys.
async fn zadd(s: &Setup, n: usize, member: Vec<u8>) {
    let submission = Submission {
        member: Member::from(member),
        generation: Generation::new(format!("zadd-{n}"), ""),
        deadline: deadline_in(3600),
        payload: None,
    };
    s.memory.submit(A, &submission).await.unwrap();
}

/// Stores another request's payload, which hostile members name.
async fn store_other_payload(s: &Setup) {
    let envelope = wire::Envelope::new(
        "other",
        "tok-other",
        deadline_in(3600),
        serde_json::json!({"p": 1}),
    );
    let submission = envelope.submission_by_reference();
    assert_eq!(submission.payload_key(), OTHER_PAYLOAD);
    s.memory.submit("another-queue", &submission).await.unwrap();
}

async fn other_payload_stored(s: &Setup) -> bool {
    let got = s.memory.fetch_payloads(&[OTHER_PAYLOAD.to_owned()]).await;
    got.unwrap()[0].is_some()
}

fn runtime(s: &Setup) -> Runtime {
    let config = rig::runtime_config(vec![QueueSpec::new(A)]);
    Runtime::builder(Arc::new(s.store.clone()))
        .handler(Arc::new(rig::Answering))
        .config(config)
        .clock(s.clock.clone())
        .build()
        .expect("valid runtime settings")
}

/// Every record in the lists a member can reach, by generation.
async fn records(s: &Setup) -> BTreeMap<(String, String), Vec<ResultRecord>> {
    let mut out: BTreeMap<_, Vec<_>> = BTreeMap::new();
    for list in [RESULTS, OTHER_LIST] {
        for raw in s.memory.results(list).await.unwrap() {
            let r = ResultRecord::from_json(raw.as_bytes()).expect("a Go-readable record");
            let key = (r.id.clone(), r.request_token.clone().unwrap_or_default());
            out.entry(key).or_default().push(r);
        }
    }
    out
}

/// Runs the runtime until nothing is pending or claimed (200 s of paused
/// time at most), then stops it within its drain bound.
async fn drain(s: &Setup) {
    let (stop, handle) = rig::start(runtime(s));
    rig::within(Duration::from_secs(200), "every member ended", async || {
        let d = s.memory.depths(A).await.unwrap();
        d.pending == 0 && d.claimed == 0
    })
    .await;
    stop.cancel();
    tokio::time::timeout(rig::DRAIN + Duration::from_secs(10), handle)
        .await
        .expect("the runtime stops within its drain bound")
        .unwrap();
}

/// A member of generation `id`/`tok-<id>`, with `internal` and `data` fields added.
fn member(id: &str, internal: serde_json::Value, data: serde_json::Value) -> Vec<u8> {
    let mut i = serde_json::json!({"request_token": format!("tok-{id}")});
    let mut d = serde_json::json!({"id": id, "deadline": deadline_in(3600), "payload": {}});
    for (from, to) in [(internal, &mut i), (data, &mut d)] {
        for (k, v) in from.as_object().cloned().unwrap_or_default() {
            to[k] = v;
        }
    }
    serde_json::json!({"internal": i, "request_kind": "redis", "data": d})
        .to_string()
        .into_bytes()
}

#[tokio::test(start_paused = true)]
async fn members_naming_another_requests_payload_key_are_answered_invalid_and_that_payload_stays() {
    let s = rig::setup();
    store_other_payload(&s).await;
    let by_ref = serde_json::json!({"payload_ref": OTHER_PAYLOAD});
    // Valid in every other field: refused for the reference alone.
    zadd(
        &s,
        0,
        member(
            "names-other",
            by_ref.clone(),
            serde_json::json!({"payload": null}),
        ),
    )
    .await;
    // Invalid in another field too: read leniently for its INVALID_REQUEST
    // ack, which must still not take the key it names.
    let bad_created = serde_json::json!({"created": "yesterday", "payload": null});
    zadd(&s, 1, member("bad-created", by_ref, bad_created)).await;
    drain(&s).await;

    let records = records(&s).await;
    for id in ["names-other", "bad-created"] {
        let got = &records[&(id.to_owned(), format!("tok-{id}"))];
        assert_eq!(got.len(), 1, "{id}");
        assert_eq!(got[0].error_code, Some(ErrorCode::InvalidRequest), "{id}");
    }
    assert!(
        other_payload_stored(&s).await,
        "another request's payload is neither deleted nor taken"
    );
}

/// A value for a numeric field, chosen to sit on and beyond every edge.
fn edge_number() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        Just(serde_json::json!(0)),
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(i64::MIN)),
        Just(serde_json::json!(i64::MAX)),
        Just(serde_json::json!(u64::MAX)),
        Just(serde_json::json!(1e300)),
        Just(serde_json::json!(0.5)),
        Just(serde_json::json!(wire::MAX_DEADLINE_SECS)),
        Just(serde_json::json!(wire::MAX_DEADLINE_SECS + 1)),
        Just(serde_json::json!(deadline_in(-10))),
        Just(serde_json::json!(deadline_in(3600))),
        Just(serde_json::json!("7")),
        Just(serde_json::Value::Null),
    ]
}

/// A name a member may give a key: its own, internal ones, other tenants'.
fn edge_name() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        Just(serde_json::json!(A)),
        Just(serde_json::json!(format!("{A}:claimed"))),
        Just(serde_json::json!(RESULTS)),
        Just(serde_json::json!(OTHER_LIST)),
        Just(serde_json::json!(OTHER_PAYLOAD)),
        Just(serde_json::json!(wire::DEFAULT_RETRY_SET)),
        Just(serde_json::json!("")),
        Just(serde_json::json!(7)),
        "[a-z{}:~|\u{0}]{0,6}".prop_map(serde_json::Value::from),
    ]
}

/// Bytes in the places ids and tokens are read from.
fn edge_text() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        "[a-z{}:~|\u{0}é]{0,8}".prop_map(serde_json::Value::from),
        Just(serde_json::json!("x".repeat(500))),
        Just(serde_json::json!(7)),
        Just(serde_json::Value::Null),
    ]
}

/// One hostile member: a JSON envelope whose fields are drawn from the
/// edges above (each present or not), or arbitrary bytes.
fn hostile_member() -> impl Strategy<Value = Vec<u8>> {
    let fields = (
        (edge_text(), edge_text(), edge_number(), edge_number()),
        (edge_number(), edge_number(), edge_name(), edge_name()),
        (any::<bool>(), any::<u8>(), edge_number()),
    );
    let json = fields.prop_map(
        |(
            (id, token, deadline, created),
            (retries, seq, payload_ref, list),
            (resolved, mask, ttl),
        )| {
            let pick = |bit: u8, v: serde_json::Value| (mask & (1 << bit) != 0).then_some(v);
            let mut internal = serde_json::Map::new();
            let mut data = serde_json::Map::new();
            data.insert("id".into(), id);
            data.insert("deadline".into(), deadline);
            data.insert("payload".into(), serde_json::json!({}));
            let optional = [
                ("request_token", pick(0, token)),
                ("retry_count", pick(1, retries)),
                ("enqueue_seq", pick(2, seq)),
                ("result_queue_name", pick(4, list)),
                ("result_routing_resolved", pick(5, resolved.into())),
                ("result_ttl_seconds", pick(6, ttl)),
            ];
            for (key, value) in optional {
                if let Some(v) = value {
                    internal.insert(key.into(), v);
                }
            }
            if let Some(r) = pick(3, payload_ref) {
                internal.insert("payload_ref".into(), r);
                data.insert("payload".into(), serde_json::Value::Null);
            }
            if let Some(c) = pick(7, created) {
                data.insert("created".into(), c);
            }
            serde_json::json!({"internal": internal, "request_kind": "redis", "data": data})
                .to_string()
                .into_bytes()
        },
    );
    prop_oneof![
        4 => json,
        1 => proptest::collection::vec(any::<u8>(), 0..64),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_members_beside_ordinary_requests_end_once_and_touch_nothing_else(
        hostile in proptest::collection::vec(hostile_member(), 1..6)
    ) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        rt.block_on(async {
            let s = rig::setup();
            store_other_payload(&s).await;
            for (n, bytes) in hostile.into_iter().enumerate() {
                zadd(&s, n, bytes).await;
            }
            rig::submit_numbered(&s, A, "ordinary", 5).await;
            drain(&s).await;

            let records = records(&s).await;
            let twice: Vec<_> = records.iter().filter(|(_, r)| r.len() > 1).collect();
            assert!(twice.is_empty(), "generations with several records: {twice:?}");
            for id in rig::ids("ordinary", 5) {
                let token = format!("tok-{id}");
                let got = &records[&(id.clone(), token)];
                assert_eq!(got[0].status_code, Some(200), "{id} answered by the handler");
            }
            assert!(other_payload_stored(&s).await, "another request's payload stays");
            let d = s.memory.depths(A).await.unwrap();
            assert_eq!((d.pending, d.claimed), (0, 0), "{d:?}");
        });
    }
}
