//! Startup bounds on every setting and the key-name collision check: one-line errors, exit code 2.

use crate::settings::{MAX_BATCH, MAX_CONCURRENCY};
use crate::settings::{ProcessorSettings, SettingsError};

const REDIS: &str = "redis://10.0.0.1:6380";
const GATEWAY: &str = "http://gw:8000";

/// Resolves `args` after `--redis-url`, ignoring any `REDIS_URL` in the test's environment.
fn resolve(args: &[&str]) -> Result<ProcessorSettings, SettingsError> {
    let argv: Vec<&str> = ["--redis-url", REDIS]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    super::resolve_env(&argv, None)
}

/// The one-line message of a refused command line.
fn refused(args: &[&str]) -> String {
    let error = resolve(args).expect_err("refused");
    assert_eq!(error.exit_code(), 2);
    let message = error.to_string();
    assert!(!message.contains('\n'), "not one line: {message}");
    message
}

fn with_gateway<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["--igw-base-url", GATEWAY];
    all.extend_from_slice(args);
    all
}

fn queues_config(queues: serde_json::Value, extra: serde_json::Value) -> String {
    let mut config = serde_json::json!({ "queues": queues });
    config
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    config.to_string()
}

#[test]
fn a_lease_under_three_seconds_is_refused_naming_the_flag_and_the_minimum() {
    let m = refused(&with_gateway(&["--claim-lease-ttl", "2s"]));
    assert!(m.contains("--claim-lease-ttl") && m.contains("3 s"), "{m}");
    assert!(resolve(&with_gateway(&["--claim-lease-ttl", "3s"])).is_ok());
}

#[test]
fn a_dedup_ttl_over_thirty_days_is_refused() {
    let m = refused(&with_gateway(&["--result-dedup-ttl", "2592001"]));
    assert!(
        m.contains("result_dedup_ttl_seconds") && m.contains("30 days"),
        "{m}"
    );
    assert!(resolve(&with_gateway(&["--result-dedup-ttl", "2592000"])).is_ok());
}

#[test]
fn concurrency_over_the_maximum_is_refused() {
    let over = (MAX_CONCURRENCY + 1).to_string();
    let m = refused(&with_gateway(&["--concurrency", &over]));
    assert!(m.starts_with("--concurrency:"), "{m}");
}

#[test]
fn a_batch_size_over_what_one_claim_call_handles_is_refused() {
    let config = queues_config(
        serde_json::json!([{"queue_name": "q", "igw_base_url": GATEWAY}]),
        serde_json::json!({"batch_size": MAX_BATCH + 1}),
    );
    let m = refused(&["--transport-config", &config]);
    assert!(m.starts_with("batch_size:"), "{m}");
}

#[test]
fn a_result_list_naming_a_queue_or_its_bookkeeping_is_refused_naming_both() {
    let config = queues_config(
        serde_json::json!([
            {"queue_name": "a", "igw_base_url": GATEWAY},
            {"queue_name": "b", "igw_base_url": GATEWAY, "result_queue_name": "a"},
        ]),
        serde_json::json!({}),
    );
    let m = refused(&["--transport-config", &config]);
    assert!(
        m.contains("result list \"a\"") && m.contains("queue \"a\""),
        "{m}"
    );

    let config = queues_config(
        serde_json::json!([{"queue_name": "a", "igw_base_url": GATEWAY}]),
        serde_json::json!({"result_queue_name": "a:dead"}),
    );
    let m = refused(&["--transport-config", &config]);
    assert!(m.contains("dead key of queue \"a\""), "{m}");
}

#[test]
fn a_retry_set_named_like_a_queue_is_refused() {
    let config = queues_config(
        serde_json::json!([{"queue_name": "a", "igw_base_url": GATEWAY}]),
        serde_json::json!({"retry_queue_name": "a"}),
    );
    let m = refused(&["--transport-config", &config]);
    assert!(m.contains("key names"), "{m}");
}
