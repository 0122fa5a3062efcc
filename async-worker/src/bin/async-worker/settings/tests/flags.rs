//! The processor's flags and transport config: defaults, precedence, the config file and its errors (the refusals: `refusals.rs`; Go durations and subcommands: `commands.rs`).

use std::time::Duration;

use super::{GATEWAY, REDIS, assert_runtime_defaults, assert_says, assert_single_queue};
use crate::cli::Cli;
use crate::settings::{ProcessorSettings, SettingsError};

/// Parses a command line the way the binary does, ignoring any `REDIS_URL`
/// in the test's environment.
pub(super) fn cli(args: &[&str]) -> Result<Cli, clap::Error> {
    super::cli(args, None)
}

/// Resolves a command line, ignoring any `REDIS_URL` in the test's environment.
pub(super) fn resolve(args: &[&str]) -> Result<ProcessorSettings, SettingsError> {
    super::resolve_env(args, None)
}

/// Resolves with a Redis URL and gateway given, plus `args`.
pub(super) fn ok(args: &[&str]) -> ProcessorSettings {
    let mut all = vec!["--redis-url", REDIS, "--igw-base-url", GATEWAY];
    all.extend_from_slice(args);
    resolve(&all).expect("settings resolve")
}

/// [`ok`] of a command line written out (its words split at whitespace).
pub(super) fn ok_line(line: &str) -> ProcessorSettings {
    ok(&line.split_whitespace().collect::<Vec<_>>())
}

/// The claim lease (ms), the reclaim interval and the result dedup TTL (ms).
pub(super) fn claim_durations(s: &ProcessorSettings) -> (u64, Duration, u64) {
    (
        s.store.lease_ttl_ms,
        s.runtime.reclaim_interval,
        s.store.result_dedup_ttl_ms,
    )
}

/// The one-line error message for `args` (with a Redis URL and gateway given).
pub(super) fn refused(args: &[&str]) -> String {
    let mut all = vec!["--redis-url", REDIS, "--igw-base-url", GATEWAY];
    all.extend_from_slice(args);
    let error = resolve(&all).expect_err("settings are refused");
    assert_eq!(error.exit_code(), 2);
    let message = error.to_string();
    assert!(!message.contains('\n'), "not one line: {message}");
    message
}

/// Asserts `text` starts with `opening`.
pub(super) fn assert_opens(text: &str, opening: &str) {
    assert!(
        text.starts_with(opening),
        "does not open with {opening:?}: {text}"
    );
}

pub(super) fn config(json: &str) -> ProcessorSettings {
    ok(&["--transport-config", json])
}

pub(super) fn config_refused(json: &str) -> String {
    refused(&["--transport-config", json])
}

#[test]
fn without_a_transport_config_one_default_queue_goes_to_the_igw_base_url() {
    let s = ok(&[]);
    assert_eq!(s.redis_url, REDIS);
    assert_single_queue(
        &s,
        "request-sortedset",
        "http://gateway:8000/v1/completions",
    );
    assert_eq!(s.queues[0].id, "request-sortedset");
    assert_eq!(s.runtime.queues.len(), 1);
    assert_eq!(s.runtime.queues[0].queue_name, "request-sortedset");
}

#[test]
fn defaults_match_the_design() {
    let s = ok(&[]);
    assert_eq!(s.store.lease_ttl_ms, 300_000);
    assert_eq!(s.store.result_dedup_ttl_ms, 21_600_000);
    assert_eq!(s.store.max_deliveries, 10);
    assert_eq!(s.store.retry_set, "retry-sortedset");
    assert_eq!(s.store.default_result_list, "result-list");
    assert_eq!(s.store.default_queue, "request-sortedset");
    assert_eq!(s.runtime.reclaim_interval, Duration::from_millis(15_000));
    assert_eq!(s.runtime.request_timeout, Duration::from_secs(300));
    assert_runtime_defaults(&s);
    assert!(!s.require_durability);
    assert!(s.notes.is_empty(), "{:?}", s.notes);
}

#[test]
fn port_zero_turns_an_endpoint_off() {
    let s = ok(&["--metrics-port", "0", "--health-port", "0"]);
    assert_eq!(s.metrics_addr, None);
    assert_eq!(s.health_addr, None);
}

#[test]
fn flags_set_the_claim_settings_when_no_config_supplies_them() {
    let s = ok_line(
        "--claim-lease-ttl 1m --claim-reclaim-interval 2s --result-dedup-ttl 2h \
         --max-deliveries 0 --concurrency 8 --request-timeout 90 --drain-timeout 1m30s",
    );
    assert_eq!(
        claim_durations(&s),
        (60_000, Duration::from_secs(2), 7_200_000)
    );
    assert_eq!(s.store.max_deliveries, 0);
    assert_eq!(s.runtime.concurrency, 8);
    assert_eq!(s.runtime.request_timeout, Duration::from_secs(90));
    assert_eq!(s.runtime.drain_timeout, Duration::from_secs(90));
}

#[test]
fn a_bare_number_is_read_in_the_flags_unit() {
    let s = ok_line("--claim-lease-ttl 45 --claim-reclaim-interval 250 --result-dedup-ttl 3600");
    assert_eq!(
        claim_durations(&s),
        (45_000, Duration::from_millis(250), 3_600_000)
    );
}

#[test]
fn transport_config_values_win_over_flags_and_the_ignored_flags_are_noted() {
    let s = ok(&[
        "--claim-lease-ttl",
        "60s",
        "--claim-reclaim-interval",
        "1s",
        "--max-deliveries",
        "3",
        "--bind-address",
        "127.0.0.1",
        "--transport-config",
        r#"{"url":"redis://cfg:6379","queues":[{"queue_name":"q","igw_base_url":"http://gw"}],
            "claim_lease_ttl_seconds":120,"claim_reclaim_interval_ms":5000,
            "result_dedup_ttl_seconds":7200,"max_deliveries":4,"bind_address":"::1"}"#,
    ]);
    assert_eq!(s.redis_url, "redis://cfg:6379");
    assert_eq!(
        claim_durations(&s),
        (120_000, Duration::from_secs(5), 7_200_000)
    );
    assert_eq!(s.store.max_deliveries, 4);
    assert_eq!(
        s.health_addr.map(|a| a.ip().to_string()).as_deref(),
        Some("::1")
    );
    let notes = s.notes.join("\n");
    assert_says(
        &notes,
        &[
            "--claim-lease-ttl 1m (or ASYNC_WORKER_CLAIM_LEASE_TTL) is ignored: --transport-config sets claim_lease_ttl_seconds to 2m",
            "--claim-reclaim-interval 1s (or ASYNC_WORKER_CLAIM_RECLAIM_INTERVAL) is ignored",
            "--max-deliveries 3 (or ASYNC_WORKER_MAX_DELIVERIES) is ignored",
            "--bind-address 127.0.0.1 (or ASYNC_WORKER_BIND_ADDRESS) is ignored",
            "--igw-base-url is ignored",
        ],
    );
}

#[test]
fn the_transport_config_sets_our_settings_that_no_flag_gives() {
    let s = ok(&[
        "--transport-config",
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw"}],"max_deliveries":4,
            "bind_address":"::1","require_durability":true,"strict_config":true}"#,
    ]);
    assert_eq!(s.store.max_deliveries, 4);
    assert_eq!(
        s.metrics_addr.map(|a| a.ip().to_string()).as_deref(),
        Some("::1")
    );
    assert!(s.require_durability);
    assert_eq!(s.notes.len(), 1, "only --igw-base-url's: {:#?}", s.notes);
    let unknown =
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw"}],"strict_config":true,"x":1}"#;
    assert_says(
        &refused(&["--transport-config", unknown]),
        &["--strict-config refuses"],
    );
    // The config's word stands: no flag turns its strictness or its
    // durability requirement off.
    assert_says(
        &refused(&["--strict-config=false", "--transport-config", unknown]),
        &["--strict-config refuses"],
    );
    let loose = r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw"}],"x":1}"#;
    let off = ok(&["--transport-config", loose]);
    assert_says(&off.notes.join("\n"), &["unknown field x is ignored"]);
    let s = ok(&[
        "--require-durability=false",
        "--transport-config",
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw"}],"require_durability":true}"#,
    ]);
    assert!(s.require_durability);
    let m = config_refused(
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw"}],"bind_address":"here"}"#,
    );
    assert_says(
        &m,
        &["bind_address", "\"here\" is not an IP address", "0.0.0.0"],
    );
}

#[test]
fn flags_apply_where_the_config_leaves_a_value_unset_or_zero() {
    let s = ok(&[
        "--claim-lease-ttl",
        "90s",
        "--transport-config",
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw"}],
            "claim_lease_ttl_seconds":0,"poll_interval_ms":0,"batch_size":null}"#,
    ]);
    assert_eq!(s.redis_url, REDIS);
    assert_eq!(s.store.lease_ttl_ms, 90_000);
    assert_eq!(s.runtime.poll_interval, Duration::from_millis(1000));
    assert_eq!(s.runtime.batch_size, 10);
}

#[test]
fn queue_entries_carry_the_go_fields() {
    let s = config(
        r#"{"retry_queue_name":"retries","result_queue_name":"results",
            "poll_interval_ms":250,"batch_size":50,
            "queues":[
              {"id":"a","queue_name":"qa","result_queue_name":"ra","worker_pool_id":"default",
               "inference_objective":"batch-sheddable","request_path_url":"v1/chat/completions",
               "igw_base_url":"http://gw:80/base","gate_type":"none",
               "gate_params":{"n":3,"on":true,"s":"x","z":null},"labels":{"tier":"gold"}},
              {"queue_name":"qb","igw_base_url":"https://gw2"}]}"#,
    );
    assert_eq!(s.store.retry_set, "retries");
    assert_eq!(s.store.default_result_list, "results");
    assert_eq!(s.store.default_queue, "qa");
    assert_eq!(
        s.store.queue_result_lists.get("qa").map(String::as_str),
        Some("ra")
    );
    assert_eq!(s.store.queue_result_lists.get("qb"), None);
    assert_eq!(s.runtime.poll_interval, Duration::from_millis(250));
    assert_eq!(s.runtime.batch_size, 50);
    let (a, b) = (&s.queues[0], &s.queues[1]);
    assert_eq!((a.id.as_str(), a.queue_name.as_str()), ("a", "qa"));
    assert_eq!(a.worker_pool_id, "default");
    assert_eq!(
        a.target.inference_objective.as_deref(),
        Some("batch-sheddable")
    );
    assert_eq!(
        a.target.url_for(None).as_str(),
        "http://gw/base/v1/chat/completions"
    );
    assert_eq!(a.labels.get("tier").map(String::as_str), Some("gold"));
    let params: Vec<_> = a
        .gate_params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    assert_eq!(params, ["n=3", "on=true", "s=\"x\"", "z=null"]);
    assert_eq!(
        (b.id.as_str(), b.worker_pool_id.as_str()),
        ("qb", "default")
    );
    assert_eq!(
        b.target.url_for(None).as_str(),
        "https://gw2/v1/completions"
    );
    assert_eq!(s.runtime.queues[0].result_queue_name.as_deref(), Some("ra"));
    assert_eq!(s.targets().len(), 2);
}

#[test]
fn a_transport_config_file_is_read() {
    let path =
        std::env::temp_dir().join(format!("async-worker-settings-{}.json", std::process::id()));
    std::fs::write(
        &path,
        r#"{"queues":[{"queue_name":"from-file","igw_base_url":"http://gw"}]}"#,
    )
    .unwrap();
    let s = ok(&["--transport-config-file", path.to_str().unwrap()]);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(s.queues[0].queue_name, "from-file");
}

#[test]
fn invalid_json_is_refused_with_line_and_column() {
    let m = config_refused("{\n  \"queues\": [\n    {\"queue_name\": \"q\",}\n  ]\n}");
    assert_opens(&m, "--transport-config is not valid JSON");
    assert_says(&m, &["line 3 column", "fix the JSON syntax"]);
    let m = config_refused(r#"{"queues":[]} trailing"#);
    assert_says(&m, &["not valid JSON"]);
}

#[test]
fn a_value_of_the_wrong_type_names_its_field() {
    let m = config_refused(
        r#"{"batch_size":"ten","queues":[{"queue_name":"q","igw_base_url":"http://gw"}]}"#,
    );
    assert_says(&m, &["batch_size: invalid type", "give it a whole number"]);
    let m = config_refused(
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw","gate_params":[1]}]}"#,
    );
    assert_says(&m, &["queues[0].gate_params"]);
}

#[test]
fn an_unreadable_config_file_names_the_path_and_the_os_error() {
    let m = refused(&["--transport-config-file", "/nonexistent/async-worker.json"]);
    assert_says(
        &m,
        &[
            "/nonexistent/async-worker.json",
            "No such file or directory",
            "check the path",
        ],
    );
}

#[test]
fn both_config_flags_together_are_a_usage_error() {
    let error = cli(&[
        "--transport-config",
        "{}",
        "--transport-config-file",
        "x.json",
    ])
    .unwrap_err();
    assert_eq!(error.kind(), clap::error::ErrorKind::ArgumentConflict);
    assert_eq!(error.exit_code(), 2);
}
