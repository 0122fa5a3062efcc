//! What becomes of each Go processor flag: honoured, accepted with a warning, or refused naming the flag and the fix; and the deprecated flags the chart passes, mapped onto the transport config.
//!
//! Nothing is silently ignored. A flag whose value changes what Go does but
//! not what we can do (authenticated /metrics, gateway TLS, hot reload) is
//! refused; a flag that cannot change behaviour here (Go's logging knobs
//! other than `--zap-encoder` and `--zap-log-level`) is accepted with a
//! note. The flow-control flags are read in `flow`.
//!
//! The deprecated flags, as in Go: once `--transport`, `--transport-config`
//! or `--transport-config-file` is given they are ignored (one note each).
//! Otherwise they build the transport config, one deprecation note each.
//! The queues come from `--redis.ss.queues-config` (a JSON array), else
//! `--redis.ss.queues-config-file`, else one queue from the single-queue
//! flags, where our `--igw-base-url` and `--request-path-url` fill what the
//! `--redis.ss.*` ones leave out. Unlike Go, deprecated flags without
//! `--message-queue-impl` are read as redis-sortedset.

use std::time::Duration;

use clap::Args;

use super::config::{QueueConfig, TransportConfig, load};
use super::{GoFlags, LegacyFlags, RunArgs, SettingsError};
use crate::logging::{ENCODERS, LogFormat, ZAP_LEVELS, zap_log_level};
use async_worker::config::DEFAULT_POOL;
use async_worker::gate::GateParams;
use async_worker::go_duration::parse_go_duration;

/// How messages name a config built from the deprecated flags.
pub(super) const LEGACY_ORIGIN: &str = "the deprecated --redis.ss.* flags";

/// Refuses the Go flags this version cannot honour, notes the accepted ones
/// that have no effect, and answers the backlog poll interval (zero = off).
pub(super) fn check_go_flags(
    flags: &GoFlags,
    notes: &mut Vec<String>,
) -> Result<Duration, SettingsError> {
    let gateway_tls = "remove it and serve the gateway with a certificate the system trusts, or over http:// inside the cluster; or keep the Go processor until gateway TLS options are supported";
    let client_cert = "client certificates towards the inference gateway are not implemented";
    let refused = [
        (
            flags.metrics_endpoint_auth == Some(true),
            "--metrics-endpoint-auth=true",
            "this version serves /metrics without authentication or authorization",
            "pass --metrics-endpoint-auth=false (the chart's default, ap.metrics.secure: false) and restrict who can reach the metrics port, e.g. with a NetworkPolicy",
        ),
        (
            non_empty(&flags.tls_ca_cert),
            "--tls-ca-cert",
            "a custom CA for the inference gateway is not implemented",
            gateway_tls,
        ),
        (
            non_empty(&flags.tls_cert),
            "--tls-cert",
            client_cert,
            gateway_tls,
        ),
        (
            non_empty(&flags.tls_key),
            "--tls-key",
            client_cert,
            gateway_tls,
        ),
        (
            flags.tls_insecure_skip_verify == Some(true),
            "--tls-insecure-skip-verify=true",
            "the gateway's certificate is always verified",
            "remove it and give the gateway a certificate the system trusts, or use http:// inside the cluster",
        ),
    ];
    if let Some((_, flag, reason, fix)) = refused.into_iter().find(|r| r.0) {
        return Err(SettingsError::unsupported(flag, reason, fix));
    }
    let backlog = go_duration(
        "--metrics-backlog-poll-interval",
        &flags.metrics_backlog_poll_interval,
    )?;
    if let Some(value) = &flags.transport_config_watch_interval
        && !go_duration("--transport-config-watch-interval", value)?.is_zero()
    {
        return Err(SettingsError::unsupported(
            "--transport-config-watch-interval",
            "the transport config is read once at start (queues are not hot-reloaded)",
            "drop the flag (or set it to 0) and restart the pods to change queues",
        ));
    }
    let logging = [
        ("-v", flags.verbosity.map(|v| v.to_string())),
        ("--zap-devel", flags.zap_devel.map(|v| v.to_string())),
        ("--zap-stacktrace-level", flags.zap_stacktrace_level.clone()),
        ("--zap-time-encoding", flags.zap_time_encoding.clone()),
    ];
    for (flag, value) in logging {
        if let Some(value) = value {
            notes.push(format!(
                "{flag} {value} (a Go logging flag) has no effect: set LOG_LEVEL (error, warn, info, debug) or RUST_LOG"
            ));
        }
    }
    Ok(backlog)
}

fn non_empty(value: &Option<String>) -> bool {
    value.as_deref().is_some_and(|v| !v.is_empty())
}

/// The log format `--zap-encoder` names (Go's zap encoders); without the
/// flag, console on a terminal and JSON otherwise.
pub(super) fn log_format(flags: &GoFlags) -> Result<LogFormat, SettingsError> {
    let Some(name) = flags.zap_encoder.as_deref() else {
        return Ok(LogFormat::for_stderr());
    };
    LogFormat::from_encoder(name).ok_or_else(|| {
        SettingsError::invalid(
            "--zap-encoder",
            format!("{name:?} is not a log encoder"),
            format!("give one of {ENCODERS} (or leave it out: console on a terminal, else json)"),
        )
    })
}

/// The log level `--zap-log-level` names (as an env-filter directive), when
/// it is given; a value Go's zap flag would refuse is refused here too.
pub(super) fn log_level(flags: &GoFlags) -> Result<Option<&'static str>, SettingsError> {
    let Some(value) = flags.zap_log_level.as_deref() else {
        return Ok(None);
    };
    zap_log_level(value).map(Some).ok_or_else(|| {
        SettingsError::invalid(
            "--zap-log-level",
            format!("{value:?} is not a log level"),
            format!("give one of {ZAP_LEVELS} (or leave it out: LOG_LEVEL, else info)"),
        )
    })
}

/// A Go duration flag (Go syntax only, as Go's flag package reads it; 0 allowed).
pub(super) fn go_duration(flag: &str, value: &str) -> Result<Duration, SettingsError> {
    parse_go_duration(value).map_err(|e| {
        let fix = "give a Go duration such as 15s, 1m or 500ms (0 turns it off)";
        SettingsError::invalid(
            format!("{flag} {value:?} is not usable"),
            e.to_string(),
            fix,
        )
    })
}

/// Each deprecated flag given, with what replaces it (its help, "Deprecated: use …").
fn given(flags: &LegacyFlags) -> Vec<(String, String)> {
    // By field name, which is each flag's clap id; null when not given.
    let values = serde_json::to_value(flags).unwrap_or_default();
    let command = LegacyFlags::augment_args(clap::Command::new("legacy"));
    (command.get_arguments())
        .filter(|arg| !values[arg.get_id().as_str()].is_null())
        .map(|arg| {
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            let instead = help.trim_start_matches("Deprecated: use ");
            let flag = format!("--{}", arg.get_long().unwrap_or_default());
            (flag, instead.trim_end_matches('.').to_owned())
        })
        .collect()
}

/// The transport config the deprecated flags describe, or `None` when none
/// is given or a `--transport*` flag wins over them.
pub(super) fn legacy_config(
    args: &RunArgs,
    notes: &mut Vec<String>,
) -> Result<Option<TransportConfig>, SettingsError> {
    let flags = &args.legacy;
    let given = given(flags);
    if given.is_empty() {
        return Ok(None);
    }
    if args.transport.is_some()
        || args.transport_config.is_some()
        || args.transport_config_file.is_some()
    {
        for (flag, instead) in given {
            notes.push(format!(
                "{flag} is ignored: a --transport* flag is given, and those win over the deprecated flags (use {instead})"
            ));
        }
        return Ok(None);
    }
    if let Some(name) = (flags.message_queue_impl.as_deref()).filter(|n| *n != "redis-sortedset") {
        return Err(SettingsError::unsupported(
            format!("--message-queue-impl={name}"),
            "this processor speaks only redis-sortedset",
            "pass --message-queue-impl=redis-sortedset, or better --transport redis-sortedset with --transport-config",
        ));
    }
    for (flag, instead) in &given {
        notes.push(format!("{flag} is deprecated: use {instead}"));
    }
    let count = |flag: &str, value: Option<i64>| match value {
        Some(v) if v < 0 => Err(SettingsError::invalid(
            flag,
            format!("{v} is negative"),
            "give it a positive number, or 0 for the default",
        )),
        other => Ok(other),
    };
    Ok(Some(TransportConfig {
        url: flags.legacy_redis_url.clone(),
        result_queue_name: flags.ss_result_queue_name.clone(),
        poll_interval_ms: count("--redis.ss.poll-interval-ms", flags.ss_poll_interval_ms)?,
        batch_size: count("--redis.ss.batch-size", flags.ss_batch_size)?,
        enable_tracing: flags.redis_tracing,
        queues: Some(legacy_queues(args, &given, notes)?),
        ..TransportConfig::default()
    }))
}

/// The queues: the JSON array, else the file's array, else one queue from the single-queue flags.
fn legacy_queues(
    args: &RunArgs,
    given: &[(String, String)],
    notes: &mut Vec<String>,
) -> Result<Vec<QueueConfig>, SettingsError> {
    let flags = &args.legacy;
    let (json, file) = (&flags.ss_queues_config, &flags.ss_queues_config_file);
    if json.is_some() && file.is_some() {
        let note = "--redis.ss.queues-config-file is ignored: --redis.ss.queues-config wins";
        notes.push(note.into());
    }
    let array = load::<Vec<QueueConfig>>(
        ("--redis.ss.queues-config", json.as_ref()),
        ("--redis.ss.queues-config-file", file.as_ref()),
        "give a JSON array of queue objects",
    )?;
    if let Some((array, _)) = array {
        // The single-queue flags (those replaced by a `queues[]` field), which
        // a queues array makes irrelevant.
        let single = (given.iter()).filter(|(_, instead)| instead.starts_with("queues[]."));
        let single = single.map(|(flag, _)| flag.as_str());
        let ours = args.igw_base_url.is_some().then_some("--igw-base-url");
        for flag in single.chain(ours) {
            notes.push(format!(
                "{flag} is ignored: the queues array configures the queues"
            ));
        }
        return Ok(array);
    }
    let gate_params = match flags.ss_gate_params.as_deref() {
        None | Some("") => GateParams::new(),
        Some(json) => serde_json::from_str(json).map_err(|e| {
            let fix = "give a JSON object of strings, numbers or booleans, such as {}";
            SettingsError::invalid("--redis.ss.gate-params: (top level)", e.to_string(), fix)
        })?,
    };
    let queue_name = flags.ss_request_queue_name.clone();
    Ok(vec![QueueConfig {
        queue_name: queue_name.or_else(|| Some(claim_core::wire::DEFAULT_QUEUE.into())),
        worker_pool_id: Some(DEFAULT_POOL.into()),
        inference_objective: flags.ss_inference_objective.clone(),
        igw_base_url: flags.ss_igw_base_url.clone().or(args.igw_base_url.clone()),
        request_path_url: (flags.ss_request_path_url.clone())
            .or(Some(args.request_path_url.clone())),
        gate_type: flags.ss_gate_type.clone(),
        gate_params: Some(gate_params),
        ..QueueConfig::default()
    }])
}
