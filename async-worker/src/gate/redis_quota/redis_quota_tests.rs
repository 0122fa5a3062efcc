//! The `redis-quota` gate: Go's startup errors one by one, and its verdicts, labels, releases and keys against a private redis-server.

use super::super::redis_clients::testing::{
    Applied, address, apply_with, gate_params, raw_connection, redis_server,
};
use super::*;
use claim_redis::testing::RedisServer;
use redis::AsyncCommands;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicI64, Ordering};

fn refusal(params: Value) -> String {
    let given = gate_params(params);
    RedisQuotaGate::from_params(Params::new("redis-quota", &given), &GateEnv::default())
        .unwrap_err()
        .0
}

/// A gate on `server` with `extra` params over `address` and `limit` 2.
fn gate_on(server: &RedisServer, extra: Value) -> RedisQuotaGate {
    let mut params = gate_params(json!({ "address": address(server), "limit": "2" }));
    params.extend(gate_params(extra));
    RedisQuotaGate::from_params(Params::new("redis-quota", &params), &GateEnv::default()).unwrap()
}

async fn apply_as(gate: &RedisQuotaGate, user: &str) -> Applied {
    apply_with(gate, &[("userid", user)]).await.unwrap()
}

fn classification(applied: &Applied) -> Option<&str> {
    applied.labels.get(CLASSIFICATION_LABEL).map(String::as_str)
}

#[test]
fn a_quota_without_an_address_is_refused_with_go_text() {
    for params in [
        json!({ "limit": "1" }),
        json!({ "address": "", "limit": "1" }),
    ] {
        assert_eq!(
            refusal(params),
            "redis-quota gate requires an 'address' in gate_params"
        );
    }
}

#[test]
fn a_limit_that_is_not_an_integer_is_refused_naming_the_value_and_what_is_accepted() {
    assert_eq!(
        refusal(json!({ "address": "h:1", "limit": "abc" })),
        "redis-quota gate: parameter 'limit' cannot be \"abc\": expected a whole number, or a string holding one"
    );
    assert_eq!(
        refusal(json!({ "address": "h:1", "limit": 2.5 })),
        "redis-quota gate: parameter 'limit' cannot be 2.5: expected a whole number, or a string holding one"
    );
}

#[test]
fn a_missing_or_non_positive_limit_is_refused_with_go_text() {
    assert_eq!(
        refusal(json!({ "address": "h:1" })),
        "redis-quota gate requires a positive 'limit', got 0"
    );
    assert_eq!(
        refusal(json!({ "address": "h:1", "limit": "-3" })),
        "redis-quota gate requires a positive 'limit', got -3"
    );
}

#[test]
fn a_window_that_is_not_a_go_duration_is_refused_naming_the_value_and_what_is_accepted() {
    let expected = "expected a Go duration string such as \"1m\" or \"500ms\"";
    assert_eq!(
        refusal(json!({ "address": "h:1", "limit": "1", "window": 60 })),
        format!(
            "redis-quota gate: parameter 'window' cannot be 60: {expected} (time: missing unit in duration \"60\")"
        )
    );
    assert_eq!(
        refusal(json!({ "address": "h:1", "limit": "1", "window": "1d" })),
        format!(
            "redis-quota gate: parameter 'window' cannot be \"1d\": {expected} (time: unknown unit \"d\" in duration \"1d\")"
        )
    );
}

#[test]
fn defaults_are_go_s_and_unknown_modes_are_accepted() {
    let params = gate_params(json!({ "address": "h:1", "limit": 5 }));
    let gate =
        RedisQuotaGate::from_params(Params::new("redis-quota", &params), &GateEnv::default())
            .unwrap();
    assert_eq!(gate.attribute, "userid");
    assert_eq!(gate.mode, Some(QuotaMode::RateLimit));
    assert!(gate.blocking);
    assert_eq!(gate.window_nanos, 60 * NANOS_PER_SEC);
    assert_eq!(gate.prefix, "quota:");
    assert_eq!(gate.key("u"), "quota:userid:u");
    let odd = gate_params(json!({ "address": "h:1", "limit": 5, "mode": "x", "gating_mode": "y" }));
    let odd =
        RedisQuotaGate::from_params(Params::new("redis-quota", &odd), &GateEnv::default()).unwrap();
    assert_eq!(odd.mode, None);
    assert!(!odd.blocking);
}

#[test]
fn ttls_follow_the_window_with_go_s_fallbacks() {
    let ttls = |window: &str| {
        let params = gate_params(json!({ "address": "h:1", "limit": 1, "window": window }));
        let gate =
            RedisQuotaGate::from_params(Params::new("redis-quota", &params), &GateEnv::default())
                .unwrap();
        (gate.concurrency_ttl_secs(), gate.rate_limit_ttl_secs())
    };
    assert_eq!(ttls("1m"), (60, 120));
    assert_eq!(ttls("1.9s"), (1, 2));
    assert_eq!(ttls("500ms"), (300, 3600));
    assert_eq!(ttls("0"), (300, 3600));
    assert_eq!(ttls("-5s"), (300, 3600));
}

#[tokio::test]
async fn a_blocking_concurrency_quota_refuses_when_the_limit_is_reached_and_a_release_frees_a_slot()
{
    let Some(server) = redis_server() else { return };
    let gate = gate_on(&server, json!({ "mode": "concurrency", "window": "30s" }));
    let mut raw = raw_connection(&server).await;
    let first = apply_as(&gate, "alice").await;
    let second = apply_as(&gate, "alice").await;
    for reserved in [&first, &second] {
        assert_eq!(reserved.verdict, Verdict::Continue);
        assert_eq!(classification(reserved), Some("reserved"));
        assert_eq!(reserved.releases.len(), 1);
        assert_eq!(reserved.labels["tier"], "batch", "other labels are kept");
    }
    let held: i64 = raw.get("quota:userid:alice").await.unwrap();
    assert_eq!(held, 2);
    let ttl: i64 = raw.ttl("quota:userid:alice").await.unwrap();
    assert!(
        (1..=30).contains(&ttl),
        "the counter expires with the window: {ttl}"
    );

    let third = apply_as(&gate, "alice").await;
    assert_eq!(third.verdict, Verdict::Refuse);
    assert_eq!(classification(&third), Some("overflow"));
    assert!(third.releases.is_empty());
    let other_user = apply_as(&gate, "bob").await;
    assert_eq!(
        other_user.verdict,
        Verdict::Continue,
        "each value has its own quota"
    );

    first.releases.run().await;
    let held: i64 = raw.get("quota:userid:alice").await.unwrap();
    assert_eq!(held, 1);
    assert_eq!(apply_as(&gate, "alice").await.verdict, Verdict::Continue);
}

#[tokio::test]
async fn a_release_never_takes_a_counter_below_zero() {
    let Some(server) = redis_server() else { return };
    let gate = gate_on(&server, json!({ "mode": "concurrency" }));
    let mut raw = raw_connection(&server).await;
    let reserved = apply_as(&gate, "alice").await;
    let () = raw.del("quota:userid:alice").await.unwrap();
    reserved.releases.run().await;
    let exists: bool = raw.exists("quota:userid:alice").await.unwrap();
    assert!(
        !exists,
        "a release after the counter is gone writes nothing"
    );
}

#[tokio::test]
async fn a_classifying_quota_labels_overflow_and_lets_it_through() {
    let Some(server) = redis_server() else { return };
    let gate = gate_on(
        &server,
        json!({ "mode": "concurrency", "limit": 1, "gating_mode": "classifying",
                "attribute": "team", "prefix": "test-composite-quota:" }),
    );
    let mut raw = raw_connection(&server).await;
    let () = raw.set("test-composite-quota:team:lo", 1).await.unwrap();
    let overflow = apply_with(&gate, &[("team", "lo")]).await.unwrap();
    assert_eq!(overflow.verdict, Verdict::Continue);
    assert_eq!(classification(&overflow), Some("overflow"));
    assert!(overflow.releases.is_empty(), "overflow reserved nothing");
    let reserved = apply_with(&gate, &[("team", "hi")]).await.unwrap();
    assert_eq!(reserved.verdict, Verdict::Continue);
    assert_eq!(classification(&reserved), Some("reserved"));
    assert_eq!(reserved.releases.len(), 1);
}

#[tokio::test]
async fn a_rate_limit_admits_the_limit_per_window_then_admits_again_once_it_slides() {
    let Some(server) = redis_server() else { return };
    let now = Arc::new(AtomicI64::new(1_700_000_000 * NANOS_PER_SEC));
    let clock = {
        let now = now.clone();
        NanosClock::from_fn(move || now.load(Ordering::SeqCst))
    };
    let gate = gate_on(&server, json!({ "window": "1s" })).with_clock(clock);
    let mut raw = raw_connection(&server).await;
    for _ in 0..2 {
        let admitted = apply_as(&gate, "alice").await;
        assert_eq!(admitted.verdict, Verdict::Continue);
        assert_eq!(classification(&admitted), Some("reserved"));
        assert!(
            admitted.releases.is_empty(),
            "an admission has nothing to give back"
        );
    }
    let counted: i64 = raw.zcard("quota:userid:alice").await.unwrap();
    assert_eq!(
        counted, 2,
        "two admissions in the same nanosecond both count"
    );
    let ttl: i64 = raw.ttl("quota:userid:alice").await.unwrap();
    assert!(
        (1..=2).contains(&ttl),
        "the set outlives the window twice over: {ttl}"
    );

    now.fetch_add(NANOS_PER_SEC / 2, Ordering::SeqCst);
    let limited = apply_as(&gate, "alice").await;
    assert_eq!(limited.verdict, Verdict::Refuse);
    assert_eq!(classification(&limited), Some("overflow"));

    now.fetch_add(NANOS_PER_SEC / 2, Ordering::SeqCst);
    assert_eq!(apply_as(&gate, "alice").await.verdict, Verdict::Continue);
    let counted: i64 = raw.zcard("quota:userid:alice").await.unwrap();
    assert_eq!(counted, 1, "admissions outside the window were dropped");
}

#[tokio::test]
async fn a_zero_window_rate_limit_always_reserves() {
    let Some(server) = redis_server() else { return };
    let gate = gate_on(&server, json!({ "window": "0", "limit": 1 }));
    for _ in 0..3 {
        let admitted = apply_as(&gate, "alice").await;
        assert_eq!(classification(&admitted), Some("reserved"));
    }
}

#[tokio::test]
async fn a_request_without_the_attribute_or_under_an_unknown_mode_passes_untouched() {
    let Some(server) = redis_server() else { return };
    let mut raw = raw_connection(&server).await;
    let gate = gate_on(&server, json!({ "mode": "concurrency", "limit": 1 }));
    let unknown_mode = gate_on(&server, json!({ "mode": "tokens", "limit": 1 }));
    for (gate, metadata) in [(&gate, ("teamid", "t1")), (&unknown_mode, ("userid", "u1"))] {
        for _ in 0..2 {
            let passed = apply_with(gate, &[metadata]).await.unwrap();
            assert_eq!(passed.verdict, Verdict::Continue);
            assert_eq!(classification(&passed), None, "labels untouched");
            assert!(passed.releases.is_empty());
        }
    }
    let keys: i64 = redis::cmd("DBSIZE").query_async(&mut raw).await.unwrap();
    assert_eq!(keys, 0, "nothing was counted");
}

#[tokio::test]
async fn an_attribute_value_over_256_bytes_is_overflow_and_never_reaches_redis() {
    let Some(server) = redis_server() else { return };
    let mut raw = raw_connection(&server).await;
    let gate = gate_on(&server, json!({ "mode": "concurrency" }));
    let longest = "x".repeat(MAX_VALUE_BYTES);
    assert_eq!(
        classification(&apply_as(&gate, &longest).await),
        Some("reserved")
    );
    let too_long = apply_as(&gate, &format!("{longest}y")).await;
    assert_eq!(too_long.verdict, Verdict::Refuse);
    assert_eq!(classification(&too_long), Some("overflow"));
    let keys: Vec<String> = raw.keys("*").await.unwrap();
    assert_eq!(keys, vec![format!("quota:userid:{longest}")]);
}

#[tokio::test]
async fn a_script_error_is_the_request_s_gate_error_and_labels_nothing() {
    let Some(server) = redis_server() else { return };
    let mut raw = raw_connection(&server).await;
    let () = raw.set("quota:userid:alice", "not a number").await.unwrap();
    for mode in ["concurrency", "rate-limit"] {
        let gate = gate_on(&server, json!({ "mode": mode }));
        let error = apply_as_result(&gate).await;
        assert!(
            matches!(error, Err(GateError::Source { .. })),
            "{mode}: {error:?}"
        );
    }
}

async fn apply_as_result(gate: &RedisQuotaGate) -> Result<Option<String>, GateError> {
    apply_with(gate, &[("userid", "alice")])
        .await
        .map(|applied| classification(&applied).map(str::to_owned))
}

#[tokio::test]
async fn a_redis_nobody_listens_on_is_a_gate_error() {
    let port = claim_redis::testing::free_port().unwrap();
    let params = gate_params(json!({ "address": format!("127.0.0.1:{port}"), "limit": 1 }));
    let gate =
        RedisQuotaGate::from_params(Params::new("redis-quota", &params), &GateEnv::default())
            .unwrap();
    let error = apply_as_result(&gate).await.unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("redis-quota gate (rate-limit): "),
        "{error}"
    );
}

#[tokio::test]
async fn gates_on_one_address_share_one_connection() {
    let env = GateEnv::default();
    let params = gate_params(json!({ "address": "127.0.0.1:1", "limit": 1 }));
    let gates = [
        RedisQuotaGate::from_params(Params::new("redis-quota", &params), &env).unwrap(),
        RedisQuotaGate::from_params(Params::new("redis-quota", &params), &env).unwrap(),
    ];
    assert!(env.redis.is_empty(), "building a gate connects nothing");
    for gate in &gates {
        let _ = gate.connection().unwrap();
    }
    assert_eq!(env.redis.len(), 1);
}
