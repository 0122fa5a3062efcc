//! Every script call the store makes is safe to run twice: one sequence of operations, run on a direct store and on a store whose every script call reaches Redis twice (common::replay), gets the same answers and leaves both servers holding the same keys, in both key layouts.
//!
//! A cluster client may resend a call after a connection drop, so any
//! script may run twice. The sequence touches every script: submit,
//! enqueue (with and without a payload stored apart), cancel, claim, renew,
//! ack (to a list in the queue's slot, to one in another slot, by a stale
//! owner, to an unusable list), releases, retry parking, promotion,
//! reclaim up to the delivery limit, and dead letters.

mod common;

use claim_core::store::{AckItem, ClaimRequest, ParkItem, StoreConfig, Submission};
use claim_core::wire::{Envelope, stamp_retry};
use claim_core::{ClaimProducer, ClaimStore, Clock, Generation, ManualClock, Member, OwnerToken};
use claim_redis::testing::{RedisServer, RedisServerOptions};
use claim_redis::{KeyLayout, RedisStore, RedisStoreOptions, TimeSource};
use common::replay::ReplayProxy;
use redis::AsyncCommands;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A queue name holding its own hash tag, so a list named `{q}…` shares its slot.
const QUEUE: &str = "{q}jobs";
/// In the queue's slot (hash-tagged: the one-script ack).
const NEAR: &str = "{q}results";
/// In another slot (hash-tagged: fence, push once, drop).
const FAR: &str = "results";
use common::DEADLINE;

/// The same store twice: on a server of its own, and on another server
/// behind the replaying proxy; one clock for both.
struct Pair {
    _servers: [RedisServer; 2],
    proxy: ReplayProxy,
    direct: RedisStore,
    replayed: RedisStore,
    raw: [redis::aio::MultiplexedConnection; 2],
    clock: Arc<ManualClock>,
}

async fn pair(layout: KeyLayout) -> Option<Pair> {
    let one = common::server(RedisServerOptions::default())?;
    let two = common::server(RedisServerOptions::default())?;
    let proxy = ReplayProxy::start(two.port()).await;
    let clock = ManualClock::new(common::T0);
    let config = StoreConfig {
        max_deliveries: 2,
        ..common::config()
    };
    let options = |url: String| RedisStoreOptions {
        key_prefix: "replay:".to_owned(),
        time: TimeSource::Clock(clock.clone() as Arc<dyn Clock>),
        key_layout: layout,
        ..RedisStoreOptions::new(url, config.clone())
    };
    let direct = RedisStore::connect(options(one.url()))
        .await
        .expect("connect");
    let replayed = RedisStore::connect(options(proxy.url()))
        .await
        .expect("connect through the proxy");
    let raw = [common::raw(&one.url()).await, common::raw(&two.url()).await];
    Some(Pair {
        _servers: [one, two],
        proxy,
        direct,
        replayed,
        raw,
        clock,
    })
}

/// Runs `$body` with `$s` bound to each store in turn and checks both
/// answered the same; gives the answer's Debug text.
macro_rules! both {
    ($pair:expr, |$s:ident| $body:expr) => {{
        let a = {
            let $s = &$pair.direct;
            format!("{:?}", $body)
        };
        let b = {
            let $s = &$pair.replayed;
            format!("{:?}", $body)
        };
        assert_eq!(
            a,
            b,
            "the replayed store answered otherwise: {}",
            stringify!($body)
        );
        eprintln!("{} => {a}", stringify!($body));
        a
    }};
}

fn envelope(id: &str) -> Envelope {
    common::envelope(QUEUE, id)
}

fn ack_item(s: &Submission, list: &str) -> AckItem {
    AckItem {
        payload_ref: s
            .payload
            .as_ref()
            .map(|_| format!("request-payload:{}:{}", s.generation.id, s.generation.token)),
        ..common::ack_item(s, list, "done")
    }
}

/// Every key on the server with its type, value and whether it expires.
async fn dump(raw: &mut redis::aio::MultiplexedConnection) -> BTreeMap<String, String> {
    let keys: Vec<String> = raw.keys("*").await.expect("KEYS");
    let mut out = BTreeMap::new();
    for key in keys {
        let kind: String = redis::cmd("TYPE").arg(&key).query_async(raw).await.unwrap();
        let value = match kind.as_str() {
            "string" => format!("{:?}", raw.get::<_, Vec<u8>>(&key).await.unwrap()),
            "hash" => format!(
                "{:?}",
                raw.hgetall::<_, BTreeMap<Vec<u8>, Vec<u8>>>(&key)
                    .await
                    .unwrap()
            ),
            "zset" => format!(
                "{:?}",
                raw.zrange_withscores::<_, Vec<(Vec<u8>, f64)>>(&key, 0, -1)
                    .await
                    .unwrap()
            ),
            "list" => format!(
                "{:?}",
                raw.lrange::<_, Vec<Vec<u8>>>(&key, 0, -1).await.unwrap()
            ),
            other => format!("a {other}"),
        };
        let pttl: i64 = raw.pttl(&key).await.unwrap();
        out.insert(key, format!("{kind} {value} expires:{}", pttl > 0));
    }
    out
}

/// The sequence, step by step on both stores; then the two servers compared.
async fn replay_everything(layout: KeyLayout) {
    let Some(mut p) = pair(layout).await else {
        return;
    };
    let w1 = OwnerToken::new("w1");
    let w2 = OwnerToken::new("w2");
    let plain: Vec<Submission> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|id| envelope(id).submission())
        .collect();
    let by_ref = envelope("g").submission_by_reference();
    for s in plain.iter().chain([&by_ref]) {
        both!(p, |s_| s_.submit(QUEUE, s).await);
    }
    let enqueued = [
        envelope("h").submission(),
        envelope("i").submission_by_reference(),
    ];
    let mut subs: Vec<Submission> = plain.clone();
    subs.push(by_ref.clone());
    for s in &enqueued {
        // The stamped member is what is pending: claim that.
        let answer = p.direct.enqueue(QUEUE, s).await.expect("enqueue");
        let again = p
            .replayed
            .enqueue(QUEUE, s)
            .await
            .expect("enqueue (replayed)");
        assert_eq!(
            answer, again,
            "enqueue stamped another sequence when replayed"
        );
        subs.push(Submission {
            member: answer,
            ..s.clone()
        });
    }
    both!(p, |s| s.cancel("b").await);
    both!(p, |s| s.peek(QUEUE, 0, 20).await);
    let requests: Vec<ClaimRequest> = subs.iter().map(Submission::claim_request).collect();
    let claimed = both!(p, |s| s.claim(w1.on(QUEUE), &requests).await);
    assert!(claimed.contains("Claimed"), "{claimed}");
    let gens: Vec<Generation> = subs.iter().map(|s| s.generation.clone()).collect();
    p.clock.advance(1_000);
    both!(p, |s| s.renew(w1.on(QUEUE), &gens).await);
    both!(p, |s| s.cancelled(&gens).await);
    let by_id = |id: &str| subs.iter().find(|s| s.generation.id == id).unwrap();
    let acks = [
        ack_item(by_id("a"), FAR),
        ack_item(by_id("b"), FAR),
        ack_item(by_id("c"), NEAR),
        ack_item(by_id("g"), FAR),
        ack_item(by_id("h"), NEAR),
    ];
    both!(p, |s| s.ack(w1.on(QUEUE), &acks).await);
    both!(p, |s| s
        .release(w1.on(QUEUE), &[by_id("d").generation.clone()])
        .await);
    let e = by_id("e");
    let parked = ParkItem {
        generation: e.generation.clone(),
        member: Member::from(stamp_retry(e.member.as_bytes(), QUEUE).unwrap()),
        due: common::T0.plus(2_000),
    };
    both!(p, |s| s
        .park_retry(w1.on(QUEUE), std::slice::from_ref(&parked))
        .await);
    p.clock.advance(2_000);
    both!(p, |s| s.promote_due(10).await);
    // Every lease lapses: f and i go back to pending (first delivery).
    p.clock.advance(40_000);
    both!(p, |s| s.reclaim_expired(QUEUE, 10).await);
    let again: Vec<ClaimRequest> = ["d", "f", "i"]
        .iter()
        .map(|id| by_id(id).claim_request())
        .collect();
    both!(p, |s| s.claim(w2.on(QUEUE), &again).await);
    // A stale owner answers d, which w2 holds: one record, w2 keeps its claim.
    both!(p, |s| s
        .ack(w1.on(QUEUE), &[ack_item(by_id("d"), FAR)])
        .await);
    // f's list is the queue itself: dead-lettered, no record.
    both!(p, |s| s
        .ack(w2.on(QUEUE), &[ack_item(by_id("f"), QUEUE)])
        .await);
    both!(p, |s| s
        .release(w2.on(QUEUE), &[by_id("d").generation.clone()])
        .await);
    // i lapses a second time: the delivery limit (2), a DELIVERY_LIMIT record.
    p.clock.advance(40_000);
    both!(p, |s| s.reclaim_expired(QUEUE, 10).await);
    for raw in &mut p.raw {
        let _: () = raw.zadd("replay:{q}jobs", "not json", 1).await.unwrap();
    }
    let junk = Member::from("not json");
    both!(p, |s| s.dead_letter(QUEUE, &junk, "unparsable").await);
    let claimed_e = both!(p, |s| s
        .claim(w2.on(QUEUE), &[parked_request(&parked).claim_request()])
        .await);
    assert!(claimed_e.contains("Claimed"), "{claimed_e}");

    assert!(
        p.proxy.replayed() > 15,
        "only {} calls replayed",
        p.proxy.replayed()
    );
    let [one, two] = &mut p.raw;
    let (direct, replayed) = (dump(one).await, dump(two).await);
    assert_eq!(
        direct, replayed,
        "a replayed script call left another state"
    );
    let far = direct
        .get("replay:results")
        .expect("records on the far list");
    // a, b (cancelled), g and d: one record each, none twice.
    for id in ["a", "b", "g", "d"] {
        let record = format!(r#"{{\"id\":\"{id}\""#);
        let _ = record;
    }
    assert!(far.starts_with("list "), "{far}");
}

fn parked_request(parked: &ParkItem) -> Submission {
    Submission {
        member: parked.member.clone(),
        generation: parked.generation.clone(),
        deadline: DEADLINE,
        payload: None,
    }
}

#[tokio::test]
async fn every_script_call_run_twice_leaves_the_state_of_one_run_in_the_plain_layout() {
    replay_everything(KeyLayout::Plain).await;
}

#[tokio::test]
async fn every_script_call_run_twice_leaves_the_state_of_one_run_in_the_hash_tagged_layout() {
    replay_everything(KeyLayout::HashTagged).await;
}

/// The check above is not vacuous: the proxy does send each script call twice.
#[tokio::test]
async fn the_proxy_runs_a_script_call_twice() {
    let Some(mut p) = pair(KeyLayout::Plain).await else {
        return;
    };
    let _: () = p.raw[1].set("counter", 0).await.unwrap();
    let client = redis::Client::open(p.proxy.url()).unwrap();
    let mut via = client.get_multiplexed_async_connection().await.unwrap();
    let first: i64 = redis::Script::new("return redis.call('INCR', KEYS[1])")
        .key("counter")
        .invoke_async(&mut via)
        .await
        .unwrap();
    let stored: i64 = p.raw[1].get("counter").await.unwrap();
    assert_eq!((first, stored), (1, 2));
}
