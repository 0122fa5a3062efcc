//! The harness of `script_numbers.rs`: the bad values, a script's case (its keys, arguments, state and checks), a raw script call, and one run per bad value and position.

use crate::common::snapshot;
use redis::aio::MultiplexedConnection;

pub(crate) const BAD: [&str; 7] = [I64_MAX, "1e300", "inf", "-inf", "nan", "-5", "1.5"];

/// A deadline the scripts take, and the ms of now, both well inside range.
pub(crate) const DEADLINE: &str = "1700003600";
pub(crate) const NOW: &str = "1700000000000";

/// The member of `a` (token `t`) with [`DEADLINE`], as the scripts read it.
pub(crate) const MEMBER: &str = r#"{"internal":{"request_token":"t"},"request_kind":"redis","data":{"id":"a","deadline":1700003600,"payload":{}}}"#;

/// An expiry (EXPIREAT seconds) well inside range.
pub(crate) const EXPIRE_AT: &str = "1700007200";

/// The largest i64, the first of [`BAD`], as a score or entry field.
pub(crate) const I64_MAX: &str = "9223372036854775807";

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
    /// Every finite number succeeds with `check` holding (a pending score,
    /// fractions included); ±inf and nan fail writing nothing.
    Finite,
}

/// One script's table row: what it must do with a bad number at each
/// position of `args`, on the state `setup` writes.
pub(crate) struct Case {
    /// The script's file under `lua/`, and what runs before it after
    /// lib.lua (the store's prelude).
    pub(crate) script: &'static str,
    pub(crate) prelude: &'static str,
    /// KEYS, in the script's header order.
    pub(crate) keys: &'static [Key],
    /// A valid ARGV; each position in `expect` is replaced in turn.
    pub(crate) args: &'static [&'static str],
    pub(crate) expect: &'static [(Expect, &'static [usize])],
    pub(crate) setup: Setup,
    /// What a clamped success must leave.
    pub(crate) check: Check,
}

/// The state a case's calls run on.
#[derive(Clone, Copy)]
pub(crate) enum Setup {
    /// Nothing under the prefix.
    Nothing,
    /// `a`'s member pending at +inf.
    Pending,
    /// [`held`] with this owner-entry score and redeliveries.
    Held(&'static str, u32),
    /// `a`'s active key set (a key the script must not touch).
    Active,
    /// `a`'s member parked in the retry set, due at NOW.
    Parked,
}

/// What a case's clamped successes must leave.
#[derive(Clone, Copy)]
pub(crate) enum Check {
    /// Nothing is clamped.
    Nothing,
    /// [`list_ttl_and_marker_set`].
    ListTtlAndMarker,
    /// One record in the list, and [`list_ttl_and_marker_set`].
    OneRecordListTtlAndMarker,
    /// The sequence counter and the active key both have an expiry.
    SequenceAndActiveExpire,
    /// `a`'s member left the retry set for pending, at the score given.
    PromotedToPending,
}

impl Case {
    /// The script text the store runs: lib.lua, the prelude, the script.
    pub(crate) fn script(&self) -> redis::Script {
        let lua = |file: &str| {
            let path = format!("{}/lua/{file}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
        };
        let text = format!("{}{}{}", lua("lib.lua"), self.prelude, lua(self.script));
        redis::Script::new(&text)
    }

    pub(crate) fn keys(&self, p: &str) -> Vec<String> {
        self.keys.iter().map(|&k| key(p, k)).collect()
    }

    pub(crate) fn args(&self) -> Vec<String> {
        s(self.args)
    }

    async fn setup(&self, raw: &mut MultiplexedConnection, p: &str) {
        let (command, args) = match self.setup {
            Setup::Nothing => return,
            Setup::Held(score, redeliveries) => return held(raw, p, score, redeliveries).await,
            Setup::Pending => (
                "ZADD",
                vec![key(p, Key::Pending), "+inf".into(), MEMBER.into()],
            ),
            Setup::Active => ("SET", vec![key(p, Key::Active), "keep".into()]),
            Setup::Parked => (
                "ZADD",
                vec![key(p, Key::Retry), "1700000000".into(), MEMBER.into()],
            ),
        };
        let _: () = redis::cmd(command)
            .arg(args)
            .query_async(raw)
            .await
            .unwrap();
    }

    async fn check(&self, raw: &mut MultiplexedConnection, p: &str, bad: &str) {
        let (list, marker) = (key(p, Key::List), key(p, Key::Marker));
        match self.check {
            Check::Nothing => {}
            Check::ListTtlAndMarker => list_ttl_and_marker_set(raw, &list, &marker, bad).await,
            Check::OneRecordListTtlAndMarker => {
                let len = int_reply(raw, "LLEN", &list).await;
                assert_eq!(len, 1, "list TTL {bad}: one record");
                list_ttl_and_marker_set(raw, &list, &marker, bad).await;
            }
            Check::SequenceAndActiveExpire => {
                let ttl = int_reply(raw, "TTL", &key(p, Key::Seq)).await;
                assert!(ttl != -1, "expiry {bad}: the counter never lives forever");
                let px = int_reply(raw, "PTTL", &key(p, Key::Active)).await;
                assert!(px != -1, "expiry {bad}: the active key has an expiry");
            }
            Check::PromotedToPending => {
                let score: Option<f64> = redis::cmd("ZSCORE")
                    .arg(key(p, Key::Pending))
                    .arg(MEMBER)
                    .query_async(raw)
                    .await
                    .unwrap();
                let want: f64 = bad.parse().unwrap();
                assert_eq!(score, Some(want), "score {bad}: pending at it");
                let parked = int_reply(raw, "ZCARD", &key(p, Key::Retry)).await;
                assert_eq!(parked, 0, "score {bad}: no longer parked");
            }
        }
    }
}

/// Runs `case`'s script once valid, then once per bad value at each of
/// its positions, on its state written afresh (every key under the
/// prefix deleted first); a refusal must be clean and leave the snapshot
/// equal, a clamped success must pass the case's check.
pub(crate) async fn each_bad_value(rig: &mut crate::common::Rig, case: &Case) {
    let p = rig.store.keys().prefix().to_owned();
    let (script, keys, args) = (case.script(), case.keys(&p), case.args());
    case.setup(&mut rig.raw, &p).await;
    let ok = run(&mut rig.raw, &script, &keys, &args).await;
    assert!(ok.is_ok(), "{}: the valid call runs: {ok:?}", case.script);
    for &(expect, positions) in case.expect {
        for &pos in positions {
            for bad in BAD {
                let cleared: Vec<Vec<u8>> = snapshot(&mut rig.raw, &p).await.into_keys().collect();
                if !cleared.is_empty() {
                    let _: () = redis::cmd("DEL")
                        .arg(cleared)
                        .query_async(&mut rig.raw)
                        .await
                        .unwrap();
                }
                case.setup(&mut rig.raw, &p).await;
                let before = snapshot(&mut rig.raw, &p).await;
                let mut argv = args.clone();
                argv[pos] = bad.to_owned();
                let result = run(&mut rig.raw, &script, &keys, &argv).await;
                let at = format!("{} ARGV[{}] = {bad}", case.script, pos + 1);
                match result {
                    Ok(_) if expect.accepts(bad) => case.check(&mut rig.raw, &p, bad).await,
                    Err(e) if !expect.accepts(bad) => {
                        assert!(
                            e.to_string().contains("claim-redis:"),
                            "{at}: a clean refusal, got {e}"
                        );
                        let after = snapshot(&mut rig.raw, &p).await;
                        assert_eq!(before, after, "{at}: nothing written");
                    }
                    Err(e) => panic!("{at} must be clamped, got {e}"),
                    Ok(v) => panic!("{at} was accepted: {v:?}"),
                }
            }
        }
    }
}

impl Expect {
    /// Whether the bad value `bad` is to be clamped (the call succeeds).
    fn accepts(self, bad: &str) -> bool {
        match self {
            Expect::Refused => false,
            Expect::Clamped => matches!(bad, I64_MAX | "1e300" | "inf"),
            Expect::AnyNumber => bad != "nan",
            Expect::FiniteWhole => matches!(bad, I64_MAX | "1e300" | "-5"),
            Expect::Finite => !matches!(bad, "inf" | "-inf" | "nan"),
        }
    }
}

pub(crate) fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// A key the scripts take, under the prefix.
#[derive(Clone, Copy)]
pub(crate) enum Key {
    Pending,
    Claimed,
    Owners,
    Index,
    Deliveries,
    Dead,
    Side,
    Marker,
    Active,
    Cancel,
    List,
    /// The sequence counter of queue `q` and deadline `x`.
    Seq,
    /// The shared retry set.
    Retry,
}

/// `key`'s name under prefix `p` (queue `q`, generation `a`/`t`).
pub(crate) fn key(p: &str, key: Key) -> String {
    let name = match key {
        Key::Pending => "q",
        Key::Claimed => "q:claimed",
        Key::Owners => "q:claim-owners",
        Key::Index => "q:claims-idx",
        Key::Deliveries => "q:deliveries",
        Key::Dead => "q:dead",
        Key::Side => "clock-side",
        Key::Marker => "marker:a",
        Key::Active => "request-active:a",
        Key::Cancel => "request-cancel:a",
        Key::List => "list",
        Key::Seq => "request-seq:q:x",
        Key::Retry => "retry-sortedset",
    };
    format!("{p}{name}")
}

/// A claim of `a` held by `w` at score `score`, lease expired at NOW - 1 s,
/// `redeliveries` earlier deliveries.
pub(crate) async fn held(raw: &mut MultiplexedConnection, p: &str, score: &str, redeliveries: u32) {
    let _: () = redis::pipe()
        .hset(key(p, Key::Claimed), "a\0t", MEMBER)
        .hset(
            key(p, Key::Owners),
            "a\0t",
            format!("w|{score}|{redeliveries}"),
        )
        .zadd(key(p, Key::Index), "a\0t", 1_699_999_999.0)
        .query_async(raw)
        .await
        .unwrap();
}

/// After a call given the bad list TTL `bad`: the list's TTL was clamped
/// and set, and the marker written with an expiry.
/// `command key`'s integer reply (LLEN, TTL, PTTL).
pub(crate) async fn int_reply(raw: &mut MultiplexedConnection, command: &str, key: &str) -> i64 {
    redis::cmd(command).arg(key).query_async(raw).await.unwrap()
}

pub(crate) async fn list_ttl_and_marker_set(
    raw: &mut MultiplexedConnection,
    list: &str,
    marker: &str,
    bad: &str,
) {
    let ttl = int_reply(raw, "TTL", list).await;
    assert!(ttl > 0, "list TTL {bad}: clamped, set");
    let px = int_reply(raw, "PTTL", marker).await;
    assert!(px > 0, "list TTL {bad}: the marker is written");
}
