//! Every script checks its numeric arguments before its first write: out-of-range values (huge, 1e300, ±inf, nan, negative) end in a clean error with nothing written, or in a correct clamped result (issue 17, item 2).
//!
//! Beside `poison.rs`'s no-write-before-error tests: here each script is run
//! raw (lib.lua and the script, as the store builds it) with one argument
//! replaced at a time, on a prefix holding the state the call would change,
//! and the prefix's DUMP snapshot compared.

mod common;

#[path = "script_numbers/harness.rs"]
mod harness;

use harness::{
    DEADLINE, Expect, NOW, each_bad_value, held, keys, list_ttl_and_marker_set, member, run, s,
};
use redis::aio::MultiplexedConnection;

/// The script text the store runs: lib.lua, the prelude, the script.
macro_rules! lua {
    ($file:literal) => {
        lua!($file, "")
    };
    ($file:literal, $prelude:literal) => {
        redis::Script::new(concat!(
            include_str!("../lua/lib.lua"),
            $prelude,
            include_str!(concat!("../lua/", $file))
        ))
    };
}

#[tokio::test]
async fn claim_refuses_an_out_of_range_time_ttl_prefix_length_or_deadline_writing_nothing() {
    let mut rig = rig_or_skip!();
    let k = keys(rig.store.keys().prefix());
    let script = lua!("claim.lua");
    let keys = vec![
        k.pending.clone(),
        k.claimed.clone(),
        k.owners.clone(),
        k.index.clone(),
        k.deliveries.clone(),
        k.side.clone(),
        k.dead.clone(),
        k.marker.clone(),
        k.cancel.clone(),
    ];
    let m = member("a", DEADLINE);
    let args = s(&["w", NOW, "30000", "0", &m, "a\0t", "t", DEADLINE]);
    let setup = async |raw: &mut MultiplexedConnection| {
        let _: () = redis::cmd("ZADD")
            .arg(&k.pending)
            .arg("+inf")
            .arg(&m)
            .query_async(raw)
            .await
            .unwrap();
    };
    setup(&mut rig.raw).await;
    let positions = [
        (1, Expect::Refused),
        (2, Expect::Refused),
        (3, Expect::Refused),
        (7, Expect::Refused),
    ];
    each_bad_value(
        &mut rig,
        &script,
        &keys,
        &args,
        &positions,
        setup,
        async |_: &mut MultiplexedConnection, _: &str| {},
    )
    .await;
}

#[tokio::test]
async fn renew_refuses_an_out_of_range_time_or_ttl_writing_nothing() {
    let mut rig = rig_or_skip!();
    let k = keys(rig.store.keys().prefix());
    let script = lua!("renew.lua");
    let keys = vec![k.owners.clone(), k.index.clone(), k.claimed.clone()];
    let args = s(&["w", NOW, "30000", "a\0t"]);
    let setup = async |raw: &mut MultiplexedConnection| held(raw, &k, "inf", 0).await;
    setup(&mut rig.raw).await;
    let positions = [(1, Expect::Refused), (2, Expect::Refused)];
    each_bad_value(
        &mut rig,
        &script,
        &keys,
        &args,
        &positions,
        setup,
        async |_: &mut MultiplexedConnection, _: &str| {},
    )
    .await;
}

#[tokio::test]
async fn ack_refuses_out_of_range_numbers_writing_nothing_and_clamps_a_huge_list_ttl() {
    let mut rig = rig_or_skip!();
    let k = keys(rig.store.keys().prefix());
    let script = lua!("ack.lua", "local TAGGED = false\n");
    let keys = vec![
        k.pending.clone(),
        k.claimed.clone(),
        k.owners.clone(),
        k.index.clone(),
        k.deliveries.clone(),
        k.dead.clone(),
        k.side.clone(),
        k.list.clone(),
        k.marker.clone(),
        k.active.clone(),
        k.cancel.clone(),
    ];
    let m = member("a", DEADLINE);
    // owner, now, dedup TTL, slack, runs, prefix length; the run (1 item,
    // no refusal, list TTL); claim key, token, record, member, deadline, digest.
    let args = s(&[
        "w", NOW, "3600000", "0", "1", "0", "1", "", "0", "a\0t", "t", "{}", &m, DEADLINE, "d",
    ]);
    let setup =
        async |raw: &mut MultiplexedConnection| held(raw, &k, "9223372036854775807", 0).await;
    setup(&mut rig.raw).await;
    let list = k.list.clone();
    let marker = k.marker.clone();
    let check = async |raw: &mut MultiplexedConnection, bad: &str| {
        let len: usize = redis::cmd("LLEN")
            .arg(&list)
            .query_async(raw)
            .await
            .unwrap();
        assert_eq!(len, 1, "list TTL {bad}: one record");
        list_ttl_and_marker_set(raw, &list, &marker, bad).await;
    };
    let positions = [
        (1, Expect::Refused),
        (2, Expect::Refused),
        (3, Expect::Refused),
        (4, Expect::Refused),
        (5, Expect::Refused),
        (6, Expect::Refused),
        (8, Expect::Clamped),
        (13, Expect::Refused),
    ];
    each_bad_value(&mut rig, &script, &keys, &args, &positions, setup, check).await;
}

#[tokio::test]
async fn push_once_refuses_out_of_range_numbers_writing_nothing_and_clamps_a_huge_list_ttl() {
    let mut rig = rig_or_skip!();
    let k = keys(rig.store.keys().prefix());
    let script = lua!("push_once.lua");
    let keys = vec![k.list.clone(), k.marker.clone()];
    // now, dedup TTL, slack, list TTL, refusal, prefix length; record,
    // digest, deadline, may push.
    let args = s(&[NOW, "3600000", "0", "0", "", "0", "{}", "d", DEADLINE, "1"]);
    let setup = async |raw: &mut MultiplexedConnection| {
        let _: () = redis::cmd("SET")
            .arg(&k.active)
            .arg("keep")
            .query_async(raw)
            .await
            .unwrap();
    };
    let list = k.list.clone();
    let marker = k.marker.clone();
    let check = async |raw: &mut MultiplexedConnection, bad: &str| {
        list_ttl_and_marker_set(raw, &list, &marker, bad).await;
    };
    let positions = [
        (0, Expect::Refused),
        (1, Expect::Refused),
        (2, Expect::Refused),
        (3, Expect::Clamped),
        (5, Expect::Refused),
        (8, Expect::Refused),
    ];
    each_bad_value(&mut rig, &script, &keys, &args, &positions, setup, check).await;
}

#[tokio::test]
async fn reclaim_refuses_an_out_of_range_time_or_ttl_and_writes_the_marker_of_an_infinite_score() {
    let mut rig = rig_or_skip!();
    let k = keys(rig.store.keys().prefix());
    let script = lua!("reclaim.lua");
    let keys = vec![
        k.pending.clone(),
        k.claimed.clone(),
        k.owners.clone(),
        k.index.clone(),
        k.deliveries.clone(),
        k.dead.clone(),
        k.side.clone(),
        k.marker.clone(),
        k.list.clone(),
        k.active.clone(),
        k.cancel.clone(),
    ];
    // now, dedup TTL, slack, explicit; the limit item: claim key, owner
    // entry, kind, payload flag, token, record, dead entry, reason, digest,
    // list TTL.
    let args = s(&[
        NOW, "3600000", "0", "0", "a\0t", "w|inf|2", "l", "0", "t", "{}", "{}", "why ", "d", "0",
    ]);
    let setup = async |raw: &mut MultiplexedConnection| held(raw, &k, "inf", 2).await;
    setup(&mut rig.raw).await;
    let positions = [
        (0, Expect::Refused),
        (1, Expect::Refused),
        (2, Expect::Refused),
        (13, Expect::Clamped),
    ];
    each_bad_value(
        &mut rig,
        &script,
        &keys,
        &args,
        &positions,
        setup,
        async |_: &mut MultiplexedConnection, _: &str| {},
    )
    .await;
    // The valid call (run first above) wrote the record and its marker,
    // from the member's deadline, though the score is +inf.
    held(&mut rig.raw, &k, "inf", 2).await;
    let _: () = redis::cmd("DEL")
        .arg(&k.marker)
        .arg(&k.list)
        .query_async(&mut rig.raw)
        .await
        .unwrap();
    run(&mut rig.raw, &script, &keys, &args)
        .await
        .expect("reclaim of an infinite score");
    let px: i64 = redis::cmd("PTTL")
        .arg(&k.marker)
        .query_async(&mut rig.raw)
        .await
        .unwrap();
    assert!(px > 0, "the marker has an expiry");
    let len: usize = redis::cmd("LLEN")
        .arg(&k.list)
        .query_async(&mut rig.raw)
        .await
        .unwrap();
    assert_eq!(len, 1);
}

#[tokio::test]
async fn enqueue_refuses_a_non_finite_deadline_and_clamps_huge_expiries() {
    let mut rig = rig_or_skip!();
    let k = keys(rig.store.keys().prefix());
    let script = lua!("enqueue.lua");
    let seq = format!("{}request-seq:q:x", rig.store.keys().prefix());
    let keys = vec![
        seq.clone(),
        k.cancel.clone(),
        k.active.clone(),
        k.pending.clone(),
        k.side.clone(),
    ];
    // prefix, suffix, deadline, command, its argument, token, active PX,
    // then the explicit-time values (server time: all '').
    let args = s(&[
        "{\"s\":",
        "}",
        DEADLINE,
        "EXPIREAT",
        "1700007200",
        "t",
        "60000",
        "",
        "",
        "",
    ]);
    let setup = async |_: &mut MultiplexedConnection| {};
    let seq_key = seq.clone();
    let active = k.active.clone();
    let check = async |raw: &mut MultiplexedConnection, bad: &str| {
        let ttl: i64 = redis::cmd("TTL")
            .arg(&seq_key)
            .query_async(raw)
            .await
            .unwrap();
        assert!(ttl != -1, "expiry {bad}: the counter never lives forever");
        let px: i64 = redis::cmd("PTTL")
            .arg(&active)
            .query_async(raw)
            .await
            .unwrap();
        assert!(px != -1, "expiry {bad}: the active key has an expiry");
    };
    let positions = [
        (2, Expect::FiniteWhole),
        (4, Expect::AnyNumber),
        (6, Expect::AnyNumber),
    ];
    each_bad_value(&mut rig, &script, &keys, &args, &positions, setup, check).await;
}
