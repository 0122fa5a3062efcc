//! Shared helpers for the Redis integration tests: a private server or a skip, stores, raw connections.
#![allow(dead_code)]

pub mod cluster;
pub mod replay;

use claim_core::store::{AckItem, StoreConfig, Submission};
use claim_core::wire::Envelope;
use claim_core::{Clock, Generation, ManualClock, Member, Millis, Score};
use claim_redis::testing::{RedisServer, RedisServerOptions, random_prefix, require_redis_server};
use claim_redis::{RedisStore, RedisStoreOptions, TimeSource};
use std::sync::Arc;
use std::time::Duration;

/// A private server, or `None` (after printing why) when `redis-server` is
/// missing outside CI. In CI a missing binary fails the test.
pub fn server(options: RedisServerOptions) -> Option<RedisServer> {
    if redis_server_missing() {
        return None;
    }
    Some(RedisServer::start(options).expect("start a private redis-server"))
}

/// Whether `redis-server` is missing (outside CI; in CI that fails the
/// test), after printing that the test is skipped.
pub fn redis_server_missing() -> bool {
    let missing = require_redis_server().is_none();
    if missing {
        eprintln!("skipped: redis-server not on PATH");
    }
    missing
}

/// What most tests start from: a private server, a store on a manual clock
/// at [`T0`] with [`config`], and a raw connection to the same server.
pub struct Rig {
    /// Keep it bound: the server stops when it drops.
    pub server: RedisServer,
    pub url: String,
    pub store: RedisStore,
    pub clock: Arc<ManualClock>,
    pub raw: redis::aio::MultiplexedConnection,
}

/// A [`Rig`] on a server started with `options`, or `None` as [`server`].
pub async fn rig(options: RedisServerOptions) -> Option<Rig> {
    let server = server(options)?;
    let url = server.url();
    let (store, clock) = manual_store(&url, config()).await;
    let raw = raw(&url).await;
    Some(Rig {
        server,
        url,
        store,
        clock,
        raw,
    })
}

/// The value a test needs from an `Option`, or a return from the test
/// (skipped, as [`server`] said why) on `None`.
#[macro_export]
macro_rules! or_skip {
    ($found:expr) => {
        match $found {
            Some(found) => found,
            None => return,
        }
    };
}

/// `common::rig(options)` (default options when none), or a return from the test when it is skipped.
#[macro_export]
macro_rules! rig_or_skip {
    () => {
        $crate::rig_or_skip!(claim_redis::testing::RedisServerOptions::default())
    };
    ($options:expr) => {
        $crate::or_skip!(common::rig($options).await)
    };
}

/// A test start time far from the real clock, as in the conformance suite.
pub const T0: Millis = Millis(1_700_000_000_000);

/// [`T0`] in Unix seconds.
pub const T0_S: i64 = 1_700_000_000;

/// A request deadline an hour after [`T0`], in Unix seconds.
pub const DEADLINE: i64 = T0_S + 3600;

/// Config with a 30 s lease, like the conformance suite.
pub fn config() -> StoreConfig {
    StoreConfig {
        lease_ttl_ms: 30_000,
        result_dedup_ttl_ms: 3_600_000,
        max_deliveries: 3,
        ..StoreConfig::default()
    }
}

pub fn options(url: &str, config: StoreConfig, time: TimeSource) -> RedisStoreOptions {
    RedisStoreOptions {
        key_prefix: random_prefix(),
        pool_size: 2,
        call_timeout: Duration::from_secs(2),
        time,
        ..RedisStoreOptions::new(url, config)
    }
}

/// A store on a manual clock at [`T0`], with a random prefix.
pub async fn manual_store(url: &str, config: StoreConfig) -> (RedisStore, Arc<ManualClock>) {
    let clock = ManualClock::new(T0);
    let time = TimeSource::Clock(clock.clone() as Arc<dyn Clock>);
    let store = RedisStore::connect(options(url, config, time))
        .await
        .expect("connect");
    (store, clock)
}

/// A private server, a store in the production layout (no prefix, default
/// names, server time) and a plain connection as the Go programs use; or
/// `None` as [`server`].
pub async fn production() -> Option<(RedisServer, RedisStore, redis::aio::MultiplexedConnection)> {
    let server = server(Default::default())?;
    let url = server.url();
    let store = RedisStore::connect(RedisStoreOptions::new(&url, StoreConfig::default()))
        .await
        .expect("connect");
    let go = raw(&url).await;
    Some((server, store, go))
}

/// A plain connection for raw commands, as a Go producer or consumer would use.
pub async fn raw(url: &str) -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(url).expect("client");
    client
        .get_multiplexed_async_connection()
        .await
        .expect("raw connection")
}

pub mod round;

/// Every key under `prefix` with its DUMP: equal snapshots mean nothing
/// was written between them.
pub async fn snapshot(
    raw: &mut redis::aio::MultiplexedConnection,
    prefix: &str,
) -> std::collections::BTreeMap<Vec<u8>, Vec<u8>> {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(raw)
        .await
        .unwrap();
    let mut out = std::collections::BTreeMap::new();
    for key in keys {
        let dump: Vec<u8> = redis::cmd("DUMP").arg(&key).query_async(raw).await.unwrap();
        out.insert(key, dump);
    }
    out
}

/// A submission of `id`/`token` with a member shaped like the Go producer's.
pub fn submission(id: &str, token: &str, deadline: i64) -> Submission {
    Submission {
        member: Member::from(member(id, token, deadline)),
        generation: Generation::new(id, token),
        deadline,
        payload: None,
    }
}

/// `id` (token `tok-<id>`, deadline [`DEADLINE`], payload `{"p": id}`)
/// produced to `queue`.
pub fn envelope(queue: &str, id: &str) -> Envelope {
    let mut e = Envelope::new(
        id,
        format!("tok-{id}"),
        DEADLINE,
        serde_json::json!({"p": id}),
    );
    e.internal.request_queue_name = queue.to_owned();
    e
}

/// `id` (token `tok-<id>`, deadline [`DEADLINE`]) produced to `queue`
/// naming `list`, as a producer that resolved its routing.
pub fn routed_submission(queue: &str, id: &str, list: &str) -> Submission {
    let mut e = Envelope::new(id, format!("tok-{id}"), DEADLINE, serde_json::json!({}));
    e.internal.request_queue_name = queue.to_owned();
    e.internal.result_queue_name = list.to_owned();
    e.internal.result_routing_resolved = true;
    e.submission()
}

/// The ack of `s`'s claim (scored at [`DEADLINE`]) with the record
/// `{"id":<id>,"payload":<text>}` into `list`, no payload stored apart.
pub fn ack_item(s: &Submission, list: &str, text: &str) -> AckItem {
    let record = format!(r#"{{"id":"{}","payload":"{text}"}}"#, s.generation.id);
    AckItem {
        generation: s.generation.clone(),
        member: s.member.clone(),
        score: Score(DEADLINE as f64),
        result_list: list.to_owned(),
        record: claim_core::Record::from(record.as_str()),
        result_ttl_seconds: 0,
        payload_ref: None,
    }
}

/// EVALSHA calls the server (or node) ran so far.
pub async fn evalsha_calls(raw: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(raw)
        .await
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("cmdstat_evalsha:calls="))
        .and_then(|rest| rest.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

/// A member shaped like the Go producer's, with a deadline in Unix seconds.
pub fn member(id: &str, token: &str, deadline: i64) -> Vec<u8> {
    format!(
        r#"{{"internal":{{"request_token":"{token}","request_queue_name":"request-sortedset","result_queue_name":"result-list"}},"request_kind":"redis","data":{{"id":"{id}","created":0,"deadline":{deadline},"payload":{{"model":"m","prompt":"{id}"}}}}}}"#
    )
    .into_bytes()
}
