//! The hot path as production runs it, on the server's clock: first record wins, a generation twice in one batch, runs of result lists, producer keys, marker expiry, and the encoding hint that leaves no trace.
//!
//! The conformance suite and the model-based tests run on an explicit
//! clock; these checks pin the same outcomes with time from the server's
//! `TIME` and markers expired by Redis itself, as in production.

mod common;

use claim_core::ListReads;
use claim_core::store::{AckItem, ClaimOutcome};
use claim_core::wire::ResultRecord;
use claim_core::{ClaimInspect, ClaimProducer, ClaimStore, Generation, Member, OwnerToken, Score};
use claim_redis::testing::{RedisServer, RedisServerOptions};
use claim_redis::{RedisStore, TimeSource};
use redis::AsyncCommands;

const Q: &str = "q";

fn deadline() -> i64 {
    claim_core::unix_now() + 600
}

/// A private server and a store on its clock (`TIME`), or `None` as `common::server`.
async fn on_server_time() -> Option<(RedisServer, RedisStore)> {
    let server = common::server(RedisServerOptions::default())?;
    let options = common::options(&server.url(), common::config(), TimeSource::Server);
    let store = RedisStore::connect(options).await.expect("connect");
    Some((server, store))
}

/// A claim as its owner holds it: what the ack names.
struct Held {
    generation: Generation,
    member: Member,
    score: Score,
}

/// Submits `id`/`token` and claims it for `owner`.
async fn claimed(store: &RedisStore, owner: &OwnerToken, id: &str, token: &str) -> Held {
    let submission = common::submission(id, token, deadline());
    store.submit(Q, &submission).await.unwrap();
    let request = submission.claim_request();
    let outcome = store.claim(owner.on(Q), &[request]).await.unwrap();
    let ClaimOutcome::Claimed { score, .. } = outcome[0] else {
        panic!("expected a claim, got {outcome:?}");
    };
    Held {
        generation: submission.generation,
        member: submission.member,
        score,
    }
}

/// Sets `key` to `value` behind the store's back (a producer's write).
async fn set(raw: &mut redis::aio::MultiplexedConnection, key: String, value: &str) {
    let _: () = raw.set(key, value).await.unwrap();
}

fn item(held: &Held, list: &str, text: &str) -> AckItem {
    let generation = &held.generation;
    AckItem {
        generation: generation.clone(),
        member: held.member.clone(),
        score: held.score,
        result_list: list.to_owned(),
        record: claim_core::Record::from(
            ResultRecord::success(&generation.id, 200, text).to_json_bytes(),
        ),
        payload_ref: None,
        result_ttl_seconds: 0,
    }
}

#[tokio::test]
async fn the_first_record_wins_and_a_stale_owners_later_ack_is_suppressed_without_touching_the_new_claim()
 {
    let (_server, store) = or_skip!(on_server_time().await);
    let (old, new) = (OwnerToken::new("old"), OwnerToken::new("new"));
    let g = claimed(&store, &new, "a", "t").await;

    let stale = store
        .ack(old.on(Q), &[item(&g, "out", "stale")])
        .await
        .unwrap();
    assert!(stale[0].pushed && !stale[0].claim_dropped, "{stale:?}");
    let owner = store
        .ack(new.on(Q), &[item(&g, "out", "late")])
        .await
        .unwrap();
    assert!(!owner[0].pushed && owner[0].claim_dropped, "{owner:?}");
    let records = store.results("out").await.unwrap();
    assert_eq!(records.len(), 1, "exactly one terminal record");
    assert!(store.is_terminal(&g.generation).await.unwrap());
    assert_eq!(store.depths(Q).await.unwrap().claimed, 0);
}

#[tokio::test]
async fn a_generation_twice_in_one_batch_pushes_once_and_runs_of_lists_keep_their_order() {
    let (_server, store) = or_skip!(on_server_time().await);
    let owner = OwnerToken::new("w");
    let (a, b, c) = (
        claimed(&store, &owner, "a", "t").await,
        claimed(&store, &owner, "b", "t").await,
        claimed(&store, &owner, "c", "t").await,
    );
    let batch = [
        item(&a, "x", "a1"),
        item(&b, "y", "b1"),
        item(&a, "y", "a2"),
        item(&c, "x", "c1"),
    ];
    let out = store.ack(owner.on(Q), &batch).await.unwrap();
    let pushed: Vec<bool> = out.iter().map(|o| o.pushed).collect();
    assert_eq!(pushed, [true, true, false, true]);
    let dropped: Vec<bool> = out.iter().map(|o| o.claim_dropped).collect();
    assert_eq!(dropped, [true, true, false, true]);
    let text = |records: Vec<claim_core::Record>| -> Vec<String> {
        records
            .iter()
            .map(|r| ResultRecord::from_json(r.as_bytes()).unwrap().payload)
            .collect()
    };
    assert_eq!(text(store.results("x").await.unwrap()), ["a1", "c1"]);
    assert_eq!(text(store.results("y").await.unwrap()), ["b1"]);
}

#[tokio::test]
async fn producer_keys_are_cleared_only_for_the_pushed_generation_and_the_owners_marker_expires_the_dedup_ttl_after_the_ack()
 {
    let (server, store) = or_skip!(on_server_time().await);
    let owner = OwnerToken::new("w");
    let g = claimed(&store, &owner, "a", "old").await;
    let prefix = store.keys().prefix().to_owned();
    let mut raw = common::raw(&server.url()).await;
    // A resubmission: the producer's keys now hold the new token.
    set(&mut raw, format!("{prefix}request-active:a"), "new").await;
    set(&mut raw, format!("{prefix}request-cancel:a"), "new").await;
    store
        .ack(owner.on(Q), &[item(&g, "out", "r")])
        .await
        .unwrap();
    let active: Option<String> = raw.get(format!("{prefix}request-active:a")).await.unwrap();
    let cancel: Option<String> = raw.get(format!("{prefix}request-cancel:a")).await.unwrap();
    assert_eq!(
        (active.as_deref(), cancel.as_deref()),
        (Some("new"), Some("new"))
    );

    let h = claimed(&store, &owner, "b", "t").await;
    set(&mut raw, format!("{prefix}request-cancel:b"), "t").await;
    store
        .ack(owner.on(Q), &[item(&h, "out", "r")])
        .await
        .unwrap();
    let left: usize = raw
        .exists(&[
            format!("{prefix}request-active:b"),
            format!("{prefix}request-cancel:b"),
        ])
        .await
        .unwrap();
    assert_eq!(left, 0, "both keys held this generation's token");
    let ttl: i64 = raw.pttl(store.keys().marker(&h.generation)).await.unwrap();
    // The deadline is ten minutes out, but the owner's ack dropped the only
    // claim: the marker lives the dedup TTL from the ack, not past the
    // deadline (Redis's own clock: PTTL counts down from PX).
    let dedup = common::config().result_dedup_ttl_ms as i64;
    assert!(ttl > dedup - 60_000 && ttl <= dedup, "marker PTTL {ttl}");
}

#[tokio::test]
async fn a_claim_leaves_no_encoding_placeholder_and_keeps_owners_and_index_out_of_listpacks() {
    let (server, store) = or_skip!(on_server_time().await);
    let owner = OwnerToken::new("w");
    let g = claimed(&store, &owner, "a", "t").await;
    let q = store.keys().queue(Q);
    let mut raw = common::raw(&server.url()).await;
    let fields: Vec<String> = raw.hkeys(&q.owners).await.unwrap();
    let members: Vec<String> = raw.zrange(&q.index, 0, -1).await.unwrap();
    assert_eq!(
        (fields, members),
        (
            vec![g.generation.claim_key()],
            vec![g.generation.claim_key()]
        )
    );
    for (key, expected) in [(&q.owners, "hashtable"), (&q.index, "skiplist")] {
        let encoding: String = redis::cmd("OBJECT")
            .arg("ENCODING")
            .arg(key)
            .query_async(&mut raw)
            .await
            .unwrap();
        assert_eq!(encoding, expected, "{key}");
    }
}

#[tokio::test]
async fn a_marker_on_the_servers_clock_is_set_with_its_values_expiry_as_pxat_and_expires_exactly_then()
 {
    let (server, store) = or_skip!(on_server_time().await);
    let owner = OwnerToken::new("w");
    let g = claimed(&store, &owner, "a", "t").await;
    let client = redis::Client::open(server.url()).expect("client");
    let mut monitor = client.get_connection().expect("monitor connection");
    monitor
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let _: () = redis::cmd("MONITOR").query(&mut monitor).unwrap();
    store
        .ack(owner.on(Q), &[item(&g, "out", "r")])
        .await
        .unwrap();
    let marker = store.keys().marker(&g.generation);
    let mut raw = common::raw(&server.url()).await;
    let value: String = raw.get(&marker).await.unwrap();
    let expiry = value.split(':').next().unwrap().to_owned();
    // The SET the script sent, as MONITOR shows it: the expiry string the
    // value begins with, absolute, so Redis neither computes nor rewrites it.
    let set = loop {
        let line: String = redis::from_redis_value(monitor.recv_response().unwrap()).unwrap();
        if line.contains(&format!("\"SET\" \"{marker}\"")) {
            break line;
        }
    };
    assert!(set.ends_with(&format!("\"PXAT\" \"{expiry}\"")), "{set}");
    let expires_at: i64 = redis::cmd("PEXPIRETIME")
        .arg(&marker)
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(expires_at.to_string(), expiry);
}
