//! Go duration syntax, the subcommands (`run` by default, `demo` with the README's defaults) and the help text.

use std::time::Duration;

use clap::Parser;

use super::REDIS;
use super::flags::cli;
use crate::cli::{Cli, Command};
use crate::settings::{BareUnit, parse_flag_duration};
use async_worker::go_duration::{DurationError, parse_go_duration};

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
            other => panic!("expected run, got {other:?}"),
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
    let help = Cli::full_command().render_long_help().to_string();
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

#[test]
fn admin_takes_the_connection_flags_before_or_after_its_command() {
    let file = "/etc/async/transport.json";
    for args in [
        vec!["admin", "dead", "list", "--transport-config-file", file],
        vec!["admin", "--transport-config-file", file, "dead", "list"],
        vec!["--transport-config-file", file, "admin", "dead", "list"],
        vec![
            "--redis-url",
            REDIS,
            "--transport-config-file",
            file,
            "admin",
            "stats",
            "--json",
        ],
    ] {
        let Command::Admin(admin) = cli(&args).unwrap().into_command() else {
            panic!("expected admin: {args:?}");
        };
        assert_eq!(
            admin.connect.transport_config_file.as_deref(),
            Some(std::path::Path::new(file)),
            "{args:?}"
        );
    }
    let Command::Admin(admin) = cli(&["--max-deliveries", "3", "admin", "stats", "--json"])
        .unwrap()
        .into_command()
    else {
        panic!("expected admin");
    };
    assert_eq!(admin.connect.max_deliveries, Some(3));
    assert!(admin.json);
}

#[test]
fn a_bad_flag_before_admin_is_named_and_help_after_it_is_admins() {
    let error = cli(&["--no-such-flag", "admin", "stats"]).unwrap_err();
    assert_eq!(error.exit_code(), 2);
    assert!(error.to_string().contains("--no-such-flag"), "{error}");
    let help = cli(&["--redis-url", REDIS, "admin", "dead", "list", "--help"]).unwrap_err();
    assert_eq!(help.exit_code(), 0);
    assert!(
        help.to_string().contains("--transport-config-file"),
        "{help}"
    );
}

/// Our own flags (Go has none of them), each with its environment variable
/// and transport config field (`queues[].…`: that of every queue).
const OURS: [(&str, &str, &str); 13] = [
    (
        "igw-base-url",
        "ASYNC_WORKER_IGW_BASE_URL",
        "queues[].igw_base_url",
    ),
    (
        "request-path-url",
        "ASYNC_WORKER_REQUEST_PATH_URL",
        "queues[].request_path_url",
    ),
    (
        "claim-lease-ttl",
        "ASYNC_WORKER_CLAIM_LEASE_TTL",
        "claim_lease_ttl_seconds",
    ),
    (
        "claim-reclaim-interval",
        "ASYNC_WORKER_CLAIM_RECLAIM_INTERVAL",
        "claim_reclaim_interval_ms",
    ),
    (
        "result-dedup-ttl",
        "ASYNC_WORKER_RESULT_DEDUP_TTL",
        "result_dedup_ttl_seconds",
    ),
    (
        "max-deliveries",
        "ASYNC_WORKER_MAX_DELIVERIES",
        "max_deliveries",
    ),
    ("bind-address", "ASYNC_WORKER_BIND_ADDRESS", "bind_address"),
    (
        "redis-tls-ca-file",
        "ASYNC_WORKER_REDIS_TLS_CA_FILE",
        "redis_tls_ca_file",
    ),
    (
        "redis-tls-cert-file",
        "ASYNC_WORKER_REDIS_TLS_CERT_FILE",
        "redis_tls_cert_file",
    ),
    (
        "redis-tls-key-file",
        "ASYNC_WORKER_REDIS_TLS_KEY_FILE",
        "redis_tls_key_file",
    ),
    ("replica-acks", "ASYNC_WORKER_REPLICA_ACKS", "replica_acks"),
    (
        "require-durability",
        "ASYNC_WORKER_REQUIRE_DURABILITY",
        "require_durability",
    ),
    (
        "strict-config",
        "ASYNC_WORKER_STRICT_CONFIG",
        "strict_config",
    ),
];

#[test]
fn help_shows_the_environment_variable_and_the_config_field_of_each_of_our_flags() {
    let mut commands = vec![Cli::full_command()];
    commands[0].build();
    for name in ["run", "admin"] {
        let sub = commands[0].find_subcommand(name).expect(name).clone();
        commands.push(sub);
    }
    for command in &mut commands {
        let help = command.render_long_help().to_string();
        for (flag, env, field) in OURS {
            let arg = command
                .get_arguments()
                .find(|a| a.get_long() == Some(flag))
                .unwrap_or_else(|| panic!("{} has no --{flag}", command.get_name()));
            assert_eq!(
                arg.get_env().and_then(|e| e.to_str()),
                Some(env),
                "--{flag}"
            );
            assert_eq!(crate::settings::env_of(flag), env, "the note names it");
            assert!(help.contains(&format!("[env: {env}")), "{env}: {help}");
            assert!(
                help.contains(&format!("config: {field}")),
                "{field}: {help}"
            );
        }
        // No other flag reads a variable of ours.
        let ours = (command.get_arguments())
            .filter_map(|a| a.get_env()?.to_str())
            .filter(|env| env.starts_with("ASYNC_WORKER_"));
        assert_eq!(ours.count(), OURS.len(), "{}", command.get_name());
    }
    let demo = commands[0].find_subcommand("demo").expect("demo");
    assert!(demo.get_arguments().all(|a| a.get_env().is_none()));
}
