//! The Go processor's flags: the argv the upstream chart passes, the deprecated flags mapped onto the config, and every current Go flag honoured, noted or refused.

use std::time::Duration;

use super::{
    CHART_SINGLE_QUEUE, QUEUE, REDIS, assert_one_note, assert_runtime_defaults, assert_says,
    assert_single_queue, cli, notes_about, ok, refused, resolve_env,
};

/// The same chart with `ap.redis.queuesConfig` set (a JSON array).
#[rustfmt::skip]
const CHART_QUEUES_CONFIG: &[&str] = &[
    "--message-queue-impl=redis-sortedset",
    "--redis.ss.queues-config",
    r#"[{"queue_name":"queue-1","inference_objective":"interactive","igw_base_url":"http://igw:80","request_path_url":"/v1/completions"},{"id":"two","queue_name":"queue-2","igw_base_url":"http://igw2:80","result_queue_name":"results-2","worker_pool_id":"default","labels":{"tier":"batch"}}]"#,
    "--redis.ss.result-queue-name", "result-list",
    "--redis.ss.poll-interval-ms", "500",
    "--redis.ss.batch-size", "25",
    "--concurrency=32",
    "--drain-timeout=2m",
    "--health-port=8081",
    "--metrics-endpoint-auth=false",
    "--metrics-port=9090",
];

#[test]
fn the_upstream_charts_single_queue_argv_gives_a_working_configuration() {
    let s = resolve_env(CHART_SINGLE_QUEUE, Some(REDIS)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.redis_url, REDIS, "REDIS_URL fills the empty url");
    assert_single_queue(&s, "request-sortedset", "http://igw/v1/completions");
    assert_eq!(s.queues[0].worker_pool_id, "default");
    assert_eq!(s.store.default_result_list, "result-list");
    assert_eq!(s.store.retry_set, "retry-sortedset");
    assert_runtime_defaults(&s);
    assert_eq!(s.runtime.backlog_poll_interval, Duration::from_secs(15));
    // One deprecation note per deprecated flag; nothing else.
    let deprecated = [
        "--message-queue-impl",
        "--redis.ss.igw-base-url",
        "--redis.ss.request-path-url",
        "--redis.ss.request-queue-name",
        "--redis.ss.result-queue-name",
        "--redis.ss.poll-interval-ms",
        "--redis.ss.batch-size",
        "--redis-tracing",
    ];
    for flag in deprecated {
        assert_one_note(&s, &format!("{flag} is deprecated"), &["use "]);
    }
    assert!(
        s.redis_tracing,
        "--redis-tracing=true turns the Redis spans on"
    );
    assert_eq!(s.notes.len(), deprecated.len(), "{:#?}", s.notes);
}

#[test]
fn the_upstream_charts_queues_config_argv_gives_a_working_configuration() {
    let s = resolve_env(CHART_QUEUES_CONFIG, Some(REDIS)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.redis_url, REDIS);
    let names: Vec<_> = s.queues.iter().map(|q| q.queue_name.as_str()).collect();
    assert_eq!(names, ["queue-1", "queue-2"]);
    assert_eq!(s.queues[0].id, "queue-1");
    assert_eq!(
        s.queues[0].target.inference_objective.as_deref(),
        Some("interactive")
    );
    assert_eq!(s.queues[1].id, "two");
    assert_eq!(
        s.queues[1].target.url_for(None).as_str(),
        "http://igw2/v1/completions"
    );
    assert_eq!(
        s.runtime.queues[1].result_queue_name.as_deref(),
        Some("results-2")
    );
    assert_eq!(
        s.queues[1].labels.get("tier").map(String::as_str),
        Some("batch")
    );
    assert_eq!(s.runtime.poll_interval, Duration::from_millis(500));
    assert_eq!(s.runtime.batch_size, 25);
    assert_eq!(s.runtime.concurrency, 32);
    assert_eq!(notes_about(&s, "is deprecated").len(), 5, "{:#?}", s.notes);
}

#[test]
fn the_charts_gate_flags_map_onto_the_single_queue() {
    let s = ok(&[
        "--message-queue-impl=redis-sortedset",
        "--redis.ss.igw-base-url=http://igw:80",
        "--redis.ss.gate-type=none",
        "--redis.ss.gate-params={\"pool\":\"p\",\"n\":2}",
        "--redis.ss.inference-objective",
        "batch",
    ]);
    let q = &s.queues[0];
    let params: Vec<_> = q
        .gate_params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    assert_eq!(
        params,
        ["n=2", "pool=\"p\""],
        "kept as given: each gate reads its own"
    );
    assert_eq!(q.target.inference_objective.as_deref(), Some("batch"));
    let refusals: [(&str, &[&str]); 1] = [(
        "--redis.ss.gate-params={bad",
        &["--redis.ss.gate-params", "give a JSON object"],
    )];
    for (flag, says) in refusals {
        assert_says(
            &refused(&["--redis.ss.igw-base-url=http://igw:80", flag]),
            says,
        );
    }
}

#[test]
fn deprecated_flags_are_ignored_once_a_transport_flag_is_given() {
    let config = format!(r#"{{"batch_size":7,"queues":[{QUEUE}]}}"#);
    for new in [
        vec!["--transport-config", config.as_str()],
        vec![
            "--transport",
            "redis-sortedset",
            "--igw-base-url",
            "http://gw",
        ],
    ] {
        let mut args = new.clone();
        args.extend([
            "--redis.ss.batch-size",
            "99",
            "--message-queue-impl=gcp-pubsub",
        ]);
        let s = ok(&args);
        assert_ne!(s.runtime.batch_size, 99);
        for flag in ["--redis.ss.batch-size", "--message-queue-impl"] {
            assert_one_note(&s, flag, &["is ignored", "a --transport* flag is given"]);
        }
    }
}

#[test]
fn message_queue_impl_other_than_redis_sortedset_is_refused() {
    for other in ["redis-pubsub", "gcp-pubsub", "gcp-pubsub-gated"] {
        let flag = format!("--message-queue-impl={other}");
        let m = refused(&[&flag, "--redis.ss.igw-base-url=http://igw"]);
        assert_says(
            &m,
            &[&format!("{flag} is not supported"), "only redis-sortedset"],
        );
    }
}

#[test]
fn redis_url_queues_config_file_and_our_gateway_flag_feed_the_deprecated_config() {
    let path = std::env::temp_dir().join(format!(
        "async-worker-ss-queues-{}.json",
        std::process::id()
    ));
    std::fs::write(
        &path,
        r#"[{"queue_name":"from-file","igw_base_url":"http://gw","extra":1}]"#,
    )
    .unwrap();
    let s = ok(&[
        "--redis.url",
        "redis://legacy:6379",
        "--redis.ss.queues-config-file",
        path.to_str().unwrap(),
        "--redis.ss.request-queue-name",
        "ignored",
    ]);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        s.redis_url, "redis://legacy:6379",
        "--redis.url wins over REDIS_URL"
    );
    assert_eq!(s.queues[0].queue_name, "from-file");
    assert_one_note(&s, "unknown field queues[0].extra", &["is ignored"]);
    assert_one_note(
        &s,
        "--redis.ss.request-queue-name is ignored",
        &["the queues array"],
    );
    // Single-queue form without --redis.ss.igw-base-url: ours fills it.
    let s = ok(&[
        "--redis.ss.batch-size",
        "5",
        "--igw-base-url",
        "http://ours",
    ]);
    assert_eq!(
        s.queues[0].target.url_for(None).as_str(),
        "http://ours/v1/completions"
    );
    assert_eq!(s.runtime.batch_size, 5);
}

#[test]
fn a_negative_deprecated_count_is_refused_naming_the_flag() {
    let refusals: [(&[&str], &str); 2] = [
        (
            &["--redis.ss.batch-size", "-1"],
            "--redis.ss.batch-size: -1 is negative",
        ),
        (
            &["--redis.ss.poll-interval-ms=-5"],
            "--redis.ss.poll-interval-ms: -5 is negative",
        ),
    ];
    for (flags, says) in refusals {
        let mut args = vec!["--redis.ss.igw-base-url=http://igw"];
        args.extend_from_slice(flags);
        assert_says(&refused(&args), &[says]);
    }
}

#[test]
fn go_flags_this_version_cannot_honour_are_refused_naming_the_flag_and_the_fix() {
    let cases: [(&[&str], &str, &str); 6] = [
        (
            &["--metrics-endpoint-auth=true"],
            "--metrics-endpoint-auth=true",
            "--metrics-endpoint-auth=false",
        ),
        (
            &["--metrics-endpoint-auth"],
            "--metrics-endpoint-auth=true",
            "NetworkPolicy",
        ),
        (
            &["--tls-ca-cert=/etc/tls/ca.crt"],
            "--tls-ca-cert",
            "certificate the system trusts",
        ),
        (
            &["--tls-cert=/c.pem", "--tls-key=/k.pem"],
            "--tls-cert",
            "http://",
        ),
        (
            &["--tls-insecure-skip-verify=true"],
            "--tls-insecure-skip-verify=true",
            "http://",
        ),
        (
            &["--transport-config-watch-interval=30s"],
            "--transport-config-watch-interval",
            "restart the pods",
        ),
    ];
    for (args, flag, fix) in cases {
        let mut all = vec!["--igw-base-url", "http://gw"];
        all.extend_from_slice(args);
        let m = refused(&all);
        assert_says(&m, &[&format!("{flag} is not supported"), fix]);
    }
}

#[test]
fn go_flags_at_values_we_match_are_accepted_silently() {
    let s = ok(&[
        "--igw-base-url",
        "http://gw",
        "--metrics-endpoint-auth=false",
        "--tls-insecure-skip-verify=false",
        "--transport-config-watch-interval=0",
        "--tls-ca-cert=",
    ]);
    assert!(s.notes.is_empty(), "{:#?}", s.notes);
}

#[test]
fn go_flags_without_effect_here_are_accepted_with_one_warning_each() {
    let s = ok(&[
        "--igw-base-url",
        "http://gw",
        "-v",
        "4",
        "--zap-devel",
        "--zap-log-level=debug",
        "--zap-encoder",
        "json",
        "--zap-stacktrace-level=error",
        "--zap-time-encoding=iso8601",
    ]);
    for flag in ["-v 4", "--zap-devel true"] {
        assert_one_note(&s, flag, &["has no effect", "LOG_LEVEL"]);
    }
    // --zap-log-level sets the level (tests/log_level.rs): no note.
    assert_eq!(s.notes.len(), 4, "{:#?}", s.notes);
    // Go registers the verbosity as both -v and --v.
    let s = ok(&["--igw-base-url", "http://gw", "--v=3"]);
    assert_one_note(&s, "-v 3", &["has no effect"]);
    let m = refused(&["--igw-base-url", "http://gw", "--gate-wait-timeout=soon"]);
    assert_says(&m, &["--gate-wait-timeout \"soon\" is not usable"]);
}

#[test]
fn metrics_backlog_poll_interval_is_a_go_duration_defaulting_to_fifteen_seconds_and_paces_the_backlog_reads()
 {
    let gw = ["--igw-base-url", "http://gw"];
    let default = ok(&gw);
    assert_eq!(
        default.runtime.backlog_poll_interval,
        Duration::from_secs(15)
    );
    let mut args = gw.to_vec();
    args.extend(["--metrics-backlog-poll-interval", "1m30s"]);
    let set = ok(&args);
    assert_eq!(set.runtime.backlog_poll_interval, Duration::from_secs(90));
    let mut args = gw.to_vec();
    args.push("--metrics-backlog-poll-interval=0");
    let off = ok(&args);
    assert_eq!(off.runtime.backlog_poll_interval, Duration::ZERO);
    let mut args = gw.to_vec();
    args.push("--metrics-backlog-poll-interval=15");
    let m = refused(&args);
    assert_says(
        &m,
        &[
            "--metrics-backlog-poll-interval \"15\" is not usable",
            "15s",
        ],
    );
}

#[test]
fn go_bool_flags_read_gos_spellings_and_refuse_others() {
    for (value, refused_as_true) in [
        ("1", true),
        ("T", true),
        ("TRUE", true),
        ("0", false),
        ("F", false),
        ("False", false),
    ] {
        let flag = format!("--metrics-endpoint-auth={value}");
        let result = resolve_env(&["--igw-base-url", "http://gw", &flag], Some(REDIS));
        assert_eq!(result.is_err(), refused_as_true, "{flag}");
    }
    let error = cli(&["--metrics-endpoint-auth=yes"], None).unwrap_err();
    assert_eq!(error.exit_code(), 2);
}

#[test]
fn zap_encoder_picks_json_or_console_lines_and_refuses_any_other_encoder() {
    use crate::logging::LogFormat;
    let gw = ["--igw-base-url", "http://gw"];
    for (encoder, format) in [("json", LogFormat::Json), ("console", LogFormat::Console)] {
        let s = ok(&[&gw[..], &["--zap-encoder", encoder]].concat());
        assert_eq!(s.log_format, format, "--zap-encoder {encoder}");
        assert!(s.notes.is_empty(), "{:#?}", s.notes);
    }
    let m = refused(&[&gw[..], &["--zap-encoder=xml"]].concat());
    assert_says(
        &m,
        &[
            "--zap-encoder",
            "\"xml\" is not a log encoder",
            "json, console",
        ],
    );
}
