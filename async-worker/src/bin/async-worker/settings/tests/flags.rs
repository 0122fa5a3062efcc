//! The processor's flags and transport config: defaults, precedence, Go durations, and every refusal.

use std::time::Duration;

use super::{GATEWAY, REDIS, assert_says};
use crate::cli::{Cli, Command};
use crate::settings::duration::{DurationError, parse_go_duration};
use crate::settings::{BareUnit, ProcessorSettings, SettingsError, parse_flag_duration};
use clap::{CommandFactory, Parser};

/// Parses a command line the way the binary does, ignoring any `REDIS_URL`
/// in the test's environment.
fn cli(args: &[&str]) -> Result<Cli, clap::Error> {
    super::cli(args, None)
}

/// Resolves a command line, ignoring any `REDIS_URL` in the test's environment.
fn resolve(args: &[&str]) -> Result<ProcessorSettings, SettingsError> {
    super::resolve_env(args, None)
}

/// Resolves with a Redis URL and gateway given, plus `args`.
fn ok(args: &[&str]) -> ProcessorSettings {
    let mut all = vec!["--redis-url", REDIS, "--igw-base-url", GATEWAY];
    all.extend_from_slice(args);
    resolve(&all).expect("settings resolve")
}

/// [`ok`] of a command line written out (its words split at whitespace).
fn ok_line(line: &str) -> ProcessorSettings {
    ok(&line.split_whitespace().collect::<Vec<_>>())
}

/// The claim lease (ms), the reclaim interval and the result dedup TTL (ms).
fn claim_durations(s: &ProcessorSettings) -> (u64, Duration, u64) {
    (
        s.store.lease_ttl_ms,
        s.runtime.reclaim_interval,
        s.store.result_dedup_ttl_ms,
    )
}

/// The one-line error message for `args` (with a Redis URL and gateway given).
fn refused(args: &[&str]) -> String {
    let mut all = vec!["--redis-url", REDIS, "--igw-base-url", GATEWAY];
    all.extend_from_slice(args);
    let error = resolve(&all).expect_err("settings are refused");
    assert_eq!(error.exit_code(), 2);
    let message = error.to_string();
    assert!(!message.contains('\n'), "not one line: {message}");
    message
}

/// Asserts `text` starts with `opening`.
fn assert_opens(text: &str, opening: &str) {
    assert!(
        text.starts_with(opening),
        "does not open with {opening:?}: {text}"
    );
}

fn config(json: &str) -> ProcessorSettings {
    ok(&["--transport-config", json])
}

fn config_refused(json: &str) -> String {
    refused(&["--transport-config", json])
}

#[test]
fn without_a_transport_config_one_default_queue_goes_to_the_igw_base_url() {
    let s = ok(&[]);
    assert_eq!(s.redis_url, REDIS);
    assert_eq!(s.queues.len(), 1);
    assert_eq!(s.queues[0].queue_name, "request-sortedset");
    assert_eq!(s.queues[0].id, "request-sortedset");
    assert_eq!(
        s.queues[0].target.url_for(None).as_str(),
        "http://gateway:8000/v1/completions"
    );
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
    assert_eq!(s.runtime.concurrency, 64);
    assert_eq!(s.runtime.batch_size, 10);
    assert_eq!(s.runtime.poll_interval, Duration::from_millis(1000));
    assert_eq!(s.runtime.request_timeout, Duration::from_secs(300));
    assert_eq!(s.runtime.drain_timeout, Duration::from_secs(120));
    assert_eq!(s.metrics_addr.map(|a| a.port()), Some(9090));
    assert_eq!(s.health_addr.map(|a| a.port()), Some(8081));
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
        "--transport-config",
        r#"{"url":"redis://cfg:6379","queues":[{"queue_name":"q","igw_base_url":"http://gw"}],
            "claim_lease_ttl_seconds":120,"claim_reclaim_interval_ms":5000,
            "result_dedup_ttl_seconds":7200,"max_deliveries":4}"#,
    ]);
    assert_eq!(s.redis_url, "redis://cfg:6379");
    assert_eq!(
        claim_durations(&s),
        (120_000, Duration::from_millis(5000), 7_200_000)
    );
    assert_eq!(s.store.max_deliveries, 4);
    let notes = s.notes.join("\n");
    assert_says(
        &notes,
        &[
            "--claim-lease-ttl 1m is ignored",
            "--claim-reclaim-interval 1s is ignored",
            "--max-deliveries 3 is ignored",
            "--igw-base-url is ignored",
        ],
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
    assert_eq!(s.runtime.default_result_list, "results");
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
    assert_eq!(params, ["n=3", "on=true", "s=x", "z="]);
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
fn go_enable_tracing_is_accepted_and_noted_as_ignored() {
    let s = config(
        r#"{"enable_tracing":true,"queues":[{"queue_name":"q","igw_base_url":"http://gw"}]}"#,
    );
    assert!(
        s.notes.iter().any(|n| n.contains("enable_tracing")),
        "{:?}",
        s.notes
    );
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
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw","gate_params":{"a":[1]}}]}"#,
    );
    assert_says(&m, &["queues[0].gate_params.a"]);
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
fn an_unknown_gate_type_is_refused_saying_only_none_is_supported() {
    let m = config_refused(
        r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw","gate_type":"redis"}]}"#,
    );
    assert_says(
        &m,
        &[
            "queues[0].gate_type \"redis\" is not supported",
            "only \"\" or \"none\"",
        ],
    );
    config(r#"{"queues":[{"queue_name":"q","igw_base_url":"http://gw","gate_type":""}]}"#);
}

#[test]
fn a_transport_other_than_redis_sortedset_is_refused() {
    let m = refused(&["--transport", "redis-pubsub"]);
    assert_opens(&m, "--transport \"redis-pubsub\" is not supported");
    assert_says(&m, &["set --transport redis-sortedset"]);
}

#[test]
fn a_redis_url_with_a_bad_scheme_or_no_host_is_refused() {
    let error = resolve(&[
        "--redis-url",
        "http://redis:6379",
        "--igw-base-url",
        GATEWAY,
    ])
    .unwrap_err();
    let m = error.to_string();
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
    let m = resolve(&[
        "--redis-url",
        "http://u:secret@redis",
        "--igw-base-url",
        GATEWAY,
    ])
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
        let s = resolve(&["--redis-url", good, "--igw-base-url", GATEWAY]).unwrap();
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

#[test]
fn go_duration_forms_parse_as_go_parses_them() {
    let cases = [
        ("300s", Duration::from_secs(300)),
        ("1m", Duration::from_secs(60)),
        ("500ms", Duration::from_millis(500)),
        ("1h30m", Duration::from_secs(5400)),
        ("1.5s", Duration::from_millis(1500)),
        (".5s", Duration::from_millis(500)),
        ("1.s", Duration::from_secs(1)),
        ("+2s", Duration::from_secs(2)),
        ("2h45m30.5s", Duration::from_millis(9_930_500)),
        ("1µs", Duration::from_micros(1)),
        ("1μs", Duration::from_micros(1)),
        ("3us", Duration::from_micros(3)),
        ("7ns", Duration::from_nanos(7)),
        ("0.000000001s", Duration::from_nanos(1)),
        ("0", Duration::ZERO),
        ("-0", Duration::ZERO),
        ("0s", Duration::ZERO),
    ];
    for (text, want) in cases {
        assert_eq!(parse_go_duration(text), Ok(want), "{text}");
    }
}

#[test]
fn strings_go_refuses_are_refused() {
    for text in [
        "1", "", "s", ".s", "1d", "1 s", "1h 30m", "2 hours", "1.5.5s", "-",
    ] {
        assert!(parse_go_duration(text).is_err(), "{text} should be refused");
    }
    assert_eq!(parse_go_duration("-1s"), Err(DurationError::Negative));
    assert_eq!(parse_go_duration("9999999h"), Err(DurationError::Overflow));
}

#[test]
fn bare_numbers_take_the_given_unit_and_suffixed_values_keep_theirs() {
    let secs = |s| parse_flag_duration(s, BareUnit::Seconds);
    let ms = |s| parse_flag_duration(s, BareUnit::Milliseconds);
    assert_eq!(secs("300"), Ok(Duration::from_secs(300)));
    assert_eq!(secs("1.5"), Ok(Duration::from_millis(1500)));
    assert_eq!(ms("15000"), Ok(Duration::from_secs(15)));
    assert_eq!(ms("2s"), Ok(Duration::from_secs(2)));
    assert_eq!(secs("-3"), Err(DurationError::Negative));
}

#[test]
fn no_subcommand_and_run_both_run_the_processor() {
    for args in [
        vec!["--concurrency", "5"],
        vec!["run", "--concurrency", "5"],
    ] {
        match cli(&args).unwrap().into_command() {
            Command::Run(run) => assert_eq!(run.concurrency, 5),
            Command::Demo(_) | Command::Admin(_) => panic!("expected run"),
        }
    }
    let error = cli(&["--concurrency", "5", "demo"]).unwrap_err();
    assert_eq!(error.exit_code(), 2);
}

#[test]
fn demo_flags_have_the_readme_defaults() {
    let Command::Demo(demo) = cli(&["demo"]).unwrap().into_command() else {
        panic!("expected demo");
    };
    assert_eq!(demo.redis, None);
    assert_eq!(demo.requests, 5000);
    assert_eq!(demo.replicas, 3);
    assert!((0.0..1.0).contains(&demo.kill_after));
    assert_eq!(demo.claim_lease_ttl, Duration::from_secs(3));
    assert_eq!((demo.payload_ref, demo.missing_payloads), (0.5, 5));
    let Command::Demo(demo) = cli(&[
        "demo",
        "--redis",
        "redis://127.0.0.1:7000",
        "--requests",
        "10",
        "--replicas",
        "2",
        "--kill-after",
        "0.5",
        "--claim-lease-ttl",
        "500ms",
    ])
    .unwrap()
    .into_command() else {
        panic!("expected demo");
    };
    assert_eq!(demo.redis.as_deref(), Some("redis://127.0.0.1:7000"));
    assert_eq!(
        (demo.requests, demo.replicas, demo.kill_after),
        (10, 2, 0.5)
    );
    assert_eq!(demo.claim_lease_ttl, Duration::from_millis(500));
    for share in ["1.5", "-0.1"] {
        let error = cli(&["demo", "--payload-ref", share]).unwrap_err();
        assert_eq!(error.exit_code(), 2, "--payload-ref {share}");
    }
    assert_eq!(
        cli(&["demo", "--kill-after", "1.5"])
            .unwrap_err()
            .exit_code(),
        2
    );
}

#[test]
fn the_help_text_names_every_design_flag() {
    let help = Cli::command().render_long_help().to_string();
    for flag in [
        "--transport <NAME>",
        "--transport-config <JSON>",
        "--transport-config-file <PATH>",
        "--claim-lease-ttl <DURATION>",
        "--claim-reclaim-interval <DURATION>",
        "--result-dedup-ttl <DURATION>",
        "--max-deliveries <N>",
        "--concurrency <N>",
        "--request-timeout <DURATION>",
        "--drain-timeout <DURATION>",
        "--metrics-port <PORT>",
        "--health-port <PORT>",
        "--redis-url <URL>",
        "--igw-base-url <URL>",
        "--require-durability",
        "--strict-config",
        "--metrics-backlog-poll-interval <DURATION>",
        "--redis.ss.queues-config <JSON>",
        "REDIS_URL",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}:\n{help}");
    }
    assert!(Cli::try_parse_from(["async-worker", "--help"]).is_err());
}
