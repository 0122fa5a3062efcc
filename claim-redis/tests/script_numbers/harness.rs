//! The harness of `script_numbers.rs`: the bad values, a prefix's DUMP snapshot, a raw script call, and one run per bad value and position.

use redis::aio::MultiplexedConnection;
use std::collections::BTreeMap;

pub(crate) const BAD: [&str; 7] = [
    "9223372036854775807",
    "1e300",
    "inf",
    "-inf",
    "nan",
    "-5",
    "1.5",
];

/// A deadline the scripts take, and the ms of now, both well inside range.
pub(crate) const DEADLINE: &str = "1700003600";
pub(crate) const NOW: &str = "1700000000000";

pub(crate) async fn snapshot(
    raw: &mut MultiplexedConnection,
    prefix: &str,
) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(raw)
        .await
        .unwrap();
    let mut out = BTreeMap::new();
    for key in keys {
        let dump: Vec<u8> = redis::cmd("DUMP").arg(&key).query_async(raw).await.unwrap();
        out.insert(key, dump);
    }
    out
}

pub(crate) async fn run(
    raw: &mut MultiplexedConnection,
    script: &redis::Script,
    keys: &[String],
    args: &[String],
) -> redis::RedisResult<redis::Value> {
    let mut call = script.prepare_invoke();
    for k in keys {
        call.key(k.as_bytes());
    }
    for a in args {
        call.arg(a.as_bytes());
    }
    call.invoke_async(raw).await
}

/// What a bad value at one position must do.
#[derive(Clone, Copy)]
pub(crate) enum Expect {
    /// The call fails and writes nothing, whatever the bad value.
    Refused,
    /// Values it can clamp (huge, inf) succeed with `check` holding; the
    /// rest (nan, negative, fractions, -inf) fail writing nothing.
    Clamped,
    /// Every number is clamped into range (negative to the lowest value)
    /// and succeeds with `check` holding; only nan fails, writing nothing.
    AnyNumber,
    /// Finite whole numbers succeed with `check` holding (they are used as
    /// a score, not an expiry); ±inf, nan and fractions fail writing nothing.
    FiniteWhole,
}

/// Runs `script` once per bad value at each `(position, expect)`, on state
/// `setup` writes afresh under `p` (every key is deleted first); a refusal
/// must leave the snapshot equal, a clamped success must pass `check`.
pub(crate) async fn each_bad_value<S, C>(
    rig: &mut crate::common::Rig,
    script: &redis::Script,
    keys: &[String],
    args: &[String],
    positions: &[(usize, Expect)],
    setup: S,
    check: C,
) where
    S: AsyncFn(&mut MultiplexedConnection),
    C: AsyncFn(&mut MultiplexedConnection, &str),
{
    let p = rig.store.keys().prefix().to_owned();
    let ok = run(&mut rig.raw, script, keys, args).await;
    assert!(ok.is_ok(), "the valid call runs: {ok:?}");
    for &(pos, expect) in positions {
        for bad in BAD {
            let mut cleared: Vec<Vec<u8>> = snapshot(&mut rig.raw, &p).await.into_keys().collect();
            if !cleared.is_empty() {
                let _: () = redis::cmd("DEL")
                    .arg(std::mem::take(&mut cleared))
                    .query_async(&mut rig.raw)
                    .await
                    .unwrap();
            }
            setup(&mut rig.raw).await;
            let before = snapshot(&mut rig.raw, &p).await;
            let mut argv = args.to_vec();
            argv[pos] = bad.to_owned();
            let result = run(&mut rig.raw, script, keys, &argv).await;
            let accept = match expect {
                Expect::Refused => false,
                Expect::Clamped => matches!(bad, "9223372036854775807" | "1e300" | "inf"),
                Expect::AnyNumber => bad != "nan",
                Expect::FiniteWhole => matches!(bad, "9223372036854775807" | "1e300" | "-5"),
            };
            match result {
                Ok(_) if accept => check(&mut rig.raw, bad).await,
                Err(e) if !accept => {
                    assert!(
                        e.to_string().contains("claim-redis:"),
                        "ARGV[{}] = {bad}: a clean refusal, got {e}",
                        pos + 1
                    );
                    assert_eq!(
                        before,
                        snapshot(&mut rig.raw, &p).await,
                        "ARGV[{}] = {bad}: nothing written",
                        pos + 1
                    );
                }
                Err(e) => panic!("ARGV[{}] = {bad} must be clamped, got {e}", pos + 1),
                Ok(v) => panic!("ARGV[{}] = {bad} was accepted: {v:?}", pos + 1),
            }
        }
    }
}

pub(crate) fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

pub(crate) fn member(id: &str, deadline: &str) -> String {
    format!(
        r#"{{"internal":{{"request_token":"t"}},"request_kind":"redis","data":{{"id":"{id}","deadline":{deadline},"payload":{{}}}}}}"#
    )
}

/// The queue's keys and a generation's per-request keys under prefix `p`.
pub(crate) struct Keys {
    pub(crate) pending: String,
    pub(crate) claimed: String,
    pub(crate) owners: String,
    pub(crate) index: String,
    pub(crate) deliveries: String,
    pub(crate) dead: String,
    pub(crate) side: String,
    pub(crate) marker: String,
    pub(crate) active: String,
    pub(crate) cancel: String,
    pub(crate) list: String,
}

pub(crate) fn keys(p: &str) -> Keys {
    Keys {
        pending: format!("{p}q"),
        claimed: format!("{p}q:claimed"),
        owners: format!("{p}q:claim-owners"),
        index: format!("{p}q:claims-idx"),
        deliveries: format!("{p}q:deliveries"),
        dead: format!("{p}q:dead"),
        side: format!("{p}clock-side"),
        marker: format!("{p}marker:a"),
        active: format!("{p}request-active:a"),
        cancel: format!("{p}request-cancel:a"),
        list: format!("{p}list"),
    }
}

/// A claim of `a` held by `w` at score `score`, lease expired at NOW - 1 s,
/// `redeliveries` earlier deliveries.
pub(crate) async fn held(
    raw: &mut MultiplexedConnection,
    k: &Keys,
    score: &str,
    redeliveries: u32,
) {
    let m = member("a", DEADLINE);
    let _: () = redis::pipe()
        .hset(&k.claimed, "a\0t", &m)
        .hset(&k.owners, "a\0t", format!("w|{score}|{redeliveries}"))
        .zadd(&k.index, "a\0t", 1_699_999_999.0)
        .query_async(raw)
        .await
        .unwrap();
}

/// After a call given the bad list TTL `bad`: the list's TTL was clamped
/// and set, and the marker written with an expiry.
pub(crate) async fn list_ttl_and_marker_set(
    raw: &mut MultiplexedConnection,
    list: &str,
    marker: &str,
    bad: &str,
) {
    let ttl: i64 = redis::cmd("TTL").arg(list).query_async(raw).await.unwrap();
    assert!(ttl > 0, "list TTL {bad}: clamped, set");
    let px: i64 = redis::cmd("PTTL")
        .arg(marker)
        .query_async(raw)
        .await
        .unwrap();
    assert!(px > 0, "list TTL {bad}: the marker is written");
}
