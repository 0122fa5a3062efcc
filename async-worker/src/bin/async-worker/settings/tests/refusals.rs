//! Every refusal of a flag or config value: negative, zero and malformed durations, leases, gateways, queues, gates, transports and Redis URLs, each one line naming what to fix.

use super::flags::{assert_opens, config, config_refused, refused, resolve};
use super::{GATEWAY, REDIS, assert_says};
use crate::settings::{ProcessorSettings, SettingsError};

#[test]
fn negative_durations_are_refused_naming_the_flag_or_field() {
    let m = refused(&["--claim-lease-ttl", "-5s"]);
    assert_opens(
        &m,
        "--claim-lease-ttl \"-5s\" is not usable: it is negative",
    );
    assert_says(&m, &["give a positive Go duration"]);
    let m = refused(&["--claim-reclaim-interval", "-100"]);
    assert_says(
        &m,
        &[
            "--claim-reclaim-interval \"-100\"",
            "bare number of milliseconds",
        ],
    );
    let m = config_refused(
        r#"{"claim_lease_ttl_seconds":-1,"queues":[{"queue_name":"q","igw_base_url":"http://gw"}]}"#,
    );
    assert_says(&m, &["claim_lease_ttl_seconds: -1 is negative"]);
    let m = config_refused(
        r#"{"max_deliveries":-1,"queues":[{"queue_name":"q","igw_base_url":"http://gw"}]}"#,
    );
    assert_says(&m, &["max_deliveries: -1 is out of range"]);
}

#[test]
fn zero_durations_are_refused() {
    for flag in [
        "--claim-lease-ttl",
        "--claim-reclaim-interval",
        "--result-dedup-ttl",
        "--request-timeout",
        "--drain-timeout",
    ] {
        let m = refused(&[flag, "0"]);
        assert_opens(&m, &format!("{flag} \"0\" is not usable: it is zero"));
    }
    let m = refused(&["--drain-timeout", "0s"]);
    assert_says(&m, &["it is zero"]);
}

#[test]
fn a_malformed_duration_says_what_syntax_to_use() {
    let m = refused(&["--request-timeout", "5 minutes"]);
    assert_says(&m, &["unknown unit", "such as 300s, 1m30s or 500ms"]);
}

#[test]
fn a_lease_longer_than_the_dedup_ttl_is_refused() {
    let m = refused(&["--claim-lease-ttl", "2h", "--result-dedup-ttl", "1h"]);
    assert_says(&m, &["raise result_dedup_ttl_seconds"]);
}

#[test]
fn a_queue_without_igw_base_url_is_refused() {
    let m = config_refused(r#"{"queues":[{"queue_name":"q"}]}"#);
    assert_says(
        &m,
        &["queues[0].igw_base_url is missing", "add \"igw_base_url\""],
    );
    let error = resolve(&["--redis-url", REDIS]).unwrap_err();
    let m = error.to_string();
    assert_opens(&m, "--igw-base-url is missing");
    assert_says(&m, &["pass --igw-base-url"]);
}

#[test]
fn a_bad_igw_base_url_is_refused() {
    let m = resolve(&["--redis-url", REDIS, "--igw-base-url", "ftp://gw"])
        .unwrap_err()
        .to_string();
    assert_opens(
        &m,
        "--igw-base-url: \"ftp://gw\" must be an http:// or https:// URL",
    );
    let m = config_refused(r#"{"queues":[{"queue_name":"q","igw_base_url":"gateway:80"}]}"#);
    assert_says(&m, &["queues[0].igw_base_url"]);
}

#[test]
fn queues_must_be_named_unique_and_present() {
    let m = config_refused(r#"{"url":"redis://r"}"#);
    assert_says(&m, &["queues: no queue is configured"]);
    let m = config_refused(r#"{"queues":[{"igw_base_url":"http://gw"}]}"#);
    assert_says(&m, &["queues[0].queue_name: is missing"]);
    let m = config_refused(
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw"},{"queue_name":"q","id":"other","igw_base_url":"http://gw"}]}"#,
    );
    assert_says(&m, &["queues[1].queue_name: \"q\" is configured twice"]);
    let m = config_refused(
        r#"{"queues":[{"queue_name":"a","id":"x","igw_base_url":"http://gw"},{"queue_name":"b","id":"x","igw_base_url":"http://gw"}]}"#,
    );
    assert_says(&m, &["queues[1].id: \"x\" is used twice"]);
}

#[test]
fn a_queue_keeps_its_gate_type_for_the_factory_and_empty_means_none() {
    let s =
        config(r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw","gate_type":"redis"}]}"#);
    assert_eq!(s.queues[0].gate_type, "redis");
    let s = config(r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw","gate_type":""}]}"#);
    assert_eq!(s.queues[0].gate_type, "");
}

#[test]
fn a_transport_other_than_redis_sortedset_is_refused() {
    let m = refused(&["--transport", "redis-pubsub"]);
    assert_opens(&m, "--transport \"redis-pubsub\" is not supported");
    assert_says(&m, &["set --transport redis-sortedset"]);
}

/// Resolves `--redis-url url` with a good gateway URL.
fn with_redis_url(url: &str) -> Result<ProcessorSettings, SettingsError> {
    resolve(&["--redis-url", url, "--igw-base-url", GATEWAY])
}

#[test]
fn a_redis_url_with_a_bad_scheme_or_no_host_is_refused() {
    let m = with_redis_url("http://redis:6379").unwrap_err().to_string();
    assert_opens(
        &m,
        "--redis-url (or REDIS_URL) \"http://redis:6379\" is not a Redis URL (scheme \"http\")",
    );
    assert_says(&m, &["use redis://host:port"]);
    let m = config_refused(
        r#"{"url":"redis://","queues":[{"queue_name":"q","igw_base_url":"http://gw"}]}"#,
    );
    assert_says(
        &m,
        &["--transport-config url \"redis://\"", "names no host"],
    );
    let m = with_redis_url("http://u:secret@redis")
        .unwrap_err()
        .to_string();
    assert!(
        !m.contains("secret") && m.contains("u:***@redis"),
        "passwords stay out of messages: {m}"
    );
    for good in [
        "rediss://r:6380",
        "unix:///tmp/redis.sock",
        "redis://:pw@r/2",
    ] {
        let s = with_redis_url(good).unwrap();
        assert_eq!(s.redis_url, good);
    }
}

#[test]
fn without_any_redis_url_the_error_lists_the_three_ways_to_give_one() {
    let m = resolve(&["--igw-base-url", GATEWAY])
        .unwrap_err()
        .to_string();
    assert_opens(
        &m,
        "url is required (set url in the transport config or REDIS_URL)",
    );
    assert!(
        m.contains("--redis-url") && m.contains("REDIS_URL") && m.contains("url"),
        "{m}"
    );
}

#[test]
fn zero_concurrency_is_refused() {
    let m = refused(&["--concurrency", "0"]);
    assert_opens(&m, "--concurrency: 0 handles nothing");
}
