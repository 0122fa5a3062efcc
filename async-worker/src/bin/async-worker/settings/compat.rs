//! What becomes of each current Go processor flag: honoured, accepted with a warning, or refused naming the flag and the fix.
//!
//! The rule: nothing is silently ignored. A flag whose value changes what Go
//! does but not what we can do (authenticated /metrics, gateway TLS, hot
//! reload) is refused. A flag that cannot change behaviour here (logging
//! knobs other than `--zap-encoder`, which picks JSON or console lines, and
//! `--zap-log-level`, which sets the level) is accepted with a note. The flow-control flags (pools, merge
//! policy, transforms, gate and Prometheus settings) are read in `flow`. The table in docs/OPERATIONS.md ("Go flags") lists the same decisions.

use std::time::Duration;

use super::error::SettingsError;
use super::go_flags::GoFlags;
use crate::logging::{ENCODERS, LogFormat, ZAP_LEVELS, zap_log_level};
use async_worker::go_duration::parse_go_duration;

/// Checks the Go flags; notes the accepted ones that have no effect and
/// answers the backlog poll interval (zero = the poll is off).
pub(super) fn check_go_flags(
    flags: &GoFlags,
    notes: &mut Vec<String>,
) -> Result<Duration, SettingsError> {
    refuse_unsupported(flags)?;

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

/// Refuses, in flag order, the first flag this version cannot honour.
fn refuse_unsupported(flags: &GoFlags) -> Result<(), SettingsError> {
    if flags.metrics_endpoint_auth == Some(true) {
        return Err(SettingsError::unsupported(
            "--metrics-endpoint-auth=true",
            "this version serves /metrics without authentication or authorization",
            "pass --metrics-endpoint-auth=false (the chart's default, ap.metrics.secure: false) and restrict who can reach the metrics port, e.g. with a NetworkPolicy",
        ));
    }
    let gateway_tls = "remove it and serve the gateway with a certificate the system trusts, or over http:// inside the cluster; or keep the Go processor until gateway TLS options are supported";
    let files: [(&str, &Option<String>, &str, &str); 3] = [
        (
            "--tls-ca-cert",
            &flags.tls_ca_cert,
            "a custom CA for the inference gateway is not implemented",
            gateway_tls,
        ),
        (
            "--tls-cert",
            &flags.tls_cert,
            "client certificates towards the inference gateway are not implemented",
            gateway_tls,
        ),
        (
            "--tls-key",
            &flags.tls_key,
            "client certificates towards the inference gateway are not implemented",
            gateway_tls,
        ),
    ];
    for (flag, path, reason, fix) in files {
        if path.as_deref().is_some_and(|p| !p.is_empty()) {
            return Err(SettingsError::unsupported(flag, reason, fix));
        }
    }
    if flags.tls_insecure_skip_verify == Some(true) {
        return Err(SettingsError::unsupported(
            "--tls-insecure-skip-verify=true",
            "the gateway's certificate is always verified",
            "remove it and give the gateway a certificate the system trusts, or use http:// inside the cluster",
        ));
    }
    Ok(())
}

/// A Go duration flag (Go syntax only, as Go's flag package reads it; 0 allowed).
pub(super) fn go_duration(flag: &str, value: &str) -> Result<Duration, SettingsError> {
    parse_go_duration(value).map_err(|e| SettingsError::Duration {
        field: flag.to_owned(),
        value: value.to_owned(),
        reason: e.to_string(),
        fix: "give a Go duration such as 15s, 1m or 500ms (0 turns it off)".into(),
    })
}
