//! The Go producer's enqueue (sequence, payload keys, expiries) and the ack's payload DEL and list EXPIRE, read back as the Go programs see them.

mod common;

use claim_core::store::{AckItem, ClaimOutcome, ClaimRequest, Submission};
use claim_core::wire::{self, Envelope, ResultRecord};
use claim_core::{ClaimProducer, ClaimStore, Generation, OwnerToken, unix_now};
use claim_redis::RedisStore;
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;

const QUEUE: &str = "request-sortedset";
const RESULTS: &str = "result-list";

/// A request by reference, as Go's producer with payload keys builds it.
fn by_reference(id: &str, deadline: i64) -> (Submission, Vec<u8>) {
    let token = format!("{id}-token");
    let envelope = Envelope::new(id, &token, deadline, serde_json::json!({"prompt": id}));
    let submission = envelope.submission_by_reference();
    let payload = submission.payload.as_ref().expect("stored apart");
    let payload = payload.as_bytes().to_vec();
    (submission, payload)
}

/// `TTL key` in seconds (-2 missing, -1 no expiry).
async fn ttl(go: &mut MultiplexedConnection, key: &str) -> i64 {
    go.ttl(key).await.expect("TTL")
}

#[tokio::test]
async fn enqueue_writes_the_go_producers_keys_with_their_expiries_and_an_exact_score() {
    let (_server, store, mut go) = or_skip!(common::production().await);
    let deadline = unix_now() + 600;
    let (s, payload) = by_reference("req-1", deadline);
    let _: () = go.set("request-cancel:req-1", "old").await.unwrap();
    let first = store.enqueue(QUEUE, &s).await.unwrap();
    let second = store
        .enqueue(QUEUE, &by_reference("req-2", deadline).0)
        .await;
    let second = second.unwrap();

    let seq_key = format!("request-seq:{QUEUE}:{deadline}");
    let count: String = go.get(&seq_key).await.unwrap();
    assert_eq!(count, "2");
    let seq_ttl = ttl(&mut go, &seq_key).await;
    assert!(
        (4190..=4200).contains(&seq_ttl),
        "EXPIREAT deadline + 1 h: {seq_ttl}"
    );
    let cancel: bool = go.exists("request-cancel:req-1").await.unwrap();
    assert!(!cancel, "the cancel marker is cleared");
    let active: String = go.get("request-active:req-1").await.unwrap();
    assert_eq!(active, "req-1-token");
    assert!((590..=600).contains(&ttl(&mut go, "request-active:req-1").await));
    let payload_key = "request-payload:req-1:req-1-token";
    let stored: Vec<u8> = go.get(payload_key).await.unwrap();
    assert_eq!(stored, payload);
    let payload_ttl = ttl(&mut go, payload_key).await;
    assert!(
        (1190..=1200).contains(&payload_ttl),
        "deadline + 10 min: {payload_ttl}"
    );

    // Redis prints the scores back; they are the exact doubles.
    let scores: Vec<(Vec<u8>, String)> = go.zrange_withscores(QUEUE, 0, -1).await.unwrap();
    let want = [
        (
            first.as_bytes().to_vec(),
            wire::queue_score(deadline, Some(1)),
        ),
        (
            second.as_bytes().to_vec(),
            wire::queue_score(deadline, Some(2)),
        ),
    ];
    assert_eq!(scores.len(), 2);
    for ((member, text), (want_member, want_score)) in scores.iter().zip(want) {
        assert_eq!(member, &want_member);
        assert_eq!(text.parse::<f64>().unwrap(), want_score.0, "{text}");
    }
    let parsed = wire::parse_member(first.as_bytes()).unwrap();
    assert_eq!(parsed.enqueue_seq, Some(1));
    assert_eq!(parsed.payload_ref.as_deref(), Some(payload_key));
    assert!(parsed.payload_is_null());
}

/// Claims every pending member for `owner` and builds its ack.
async fn claim_all(store: &RedisStore, owner: &OwnerToken, ttl: u64) -> Vec<AckItem> {
    let pending = store.peek(QUEUE, 0, 100).await.unwrap();
    let mut items = Vec::new();
    for e in pending {
        let p = wire::parse_member(e.member.as_bytes()).unwrap();
        let generation = Generation::new(p.id.clone(), p.token.clone());
        let request = ClaimRequest {
            member: e.member.clone(),
            generation: generation.clone(),
        };
        let out = store.claim(owner.on(QUEUE), &[request]).await.unwrap();
        let ClaimOutcome::Claimed { score, .. } = out[0] else {
            panic!("claimed: {out:?}");
        };
        let record = ResultRecord::success(&p.id, 200, "{}").to_json_bytes();
        items.push(AckItem {
            generation,
            member: e.member,
            score,
            result_list: RESULTS.into(),
            record: claim_core::Record::from(record),
            payload_ref: p.payload_ref,
            result_ttl_seconds: ttl,
        });
    }
    items
}

/// Calls of `command` since the last `CONFIG RESETSTAT` (scripts' calls included).
async fn calls(go: &mut MultiplexedConnection, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(go)
        .await
        .unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

async fn reset_stats(go: &mut MultiplexedConnection) {
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(go)
        .await
        .unwrap();
}

#[tokio::test]
async fn the_owners_ack_deletes_fetched_payloads_and_expires_the_list_with_one_command_each() {
    let (_server, store, mut go) = or_skip!(common::production().await);
    let deadline = unix_now() + 600;
    let mut keys = Vec::new();
    for i in 0..5 {
        let (s, _) = by_reference(&format!("r{i}"), deadline);
        keys.push(s.payload_key());
        store.enqueue(QUEUE, &s).await.unwrap();
    }
    let owner = OwnerToken::new("rust-worker");
    let items = claim_all(&store, &owner, 120).await;
    let refs: Vec<String> = items.iter().filter_map(|i| i.payload_ref.clone()).collect();
    assert_eq!(
        refs, keys,
        "every member names its payload key, in peek order"
    );
    let fetched = store.fetch_payloads(&refs).await.unwrap();
    assert!(fetched.iter().all(Option::is_some));

    reset_stats(&mut go).await;
    let out = store.ack(owner.on(QUEUE), &items).await.unwrap();
    assert!(out.iter().all(|o| o.pushed && o.claim_dropped));
    assert_eq!(calls(&mut go, "expire").await, 1, "one EXPIRE for the run");
    let left: usize = go.exists(&keys).await.unwrap();
    assert_eq!(left, 0, "no payload key is left for an answered request");
    assert!((110..=120).contains(&ttl(&mut go, RESULTS).await));
    let dels_with_refs = calls(&mut go, "del").await;

    // The same batch shape without payload refs or a TTL: one DEL fewer
    // (the producer keys' DEL stays) and no EXPIRE.
    for i in 0..5 {
        let (s, _) = by_reference(&format!("s{i}"), deadline);
        store.enqueue(QUEUE, &s).await.unwrap();
    }
    let mut items = claim_all(&store, &owner, 0).await;
    for item in &mut items {
        item.payload_ref = None;
    }
    reset_stats(&mut go).await;
    store.ack(owner.on(QUEUE), &items).await.unwrap();
    assert_eq!(calls(&mut go, "expire").await, 0);
    assert_eq!(calls(&mut go, "del").await + 1, dels_with_refs);
}
