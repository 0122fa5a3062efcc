//! The deprecated `--message-queue-impl`, `--redis.url`, `--redis.ss.*` and `--redis-tracing` flags, mapped onto a transport config.
//!
//! As in Go: once `--transport`, `--transport-config` or
//! `--transport-config-file` is given, the deprecated flags are ignored (one
//! note each saying so). Otherwise the ones given build the transport config,
//! one deprecation note each naming the new spelling. The queues come from
//! `--redis.ss.queues-config` (a JSON array), else
//! `--redis.ss.queues-config-file`, else one queue from the single-queue
//! flags, where our `--igw-base-url` and `--request-path-url` fill what the
//! `--redis.ss.*` ones leave out. Unlike Go, deprecated flags without
//! `--message-queue-impl` are read as redis-sortedset (the only transport here).

use std::collections::BTreeMap;

use claim_core::wire;

use super::RunArgs;
use super::error::SettingsError;
use super::go_flags::LegacyFlags;
use super::transport::{QueueConfig, TransportConfig};
use async_worker::config::DEFAULT_POOL;

/// How messages name a config built from the deprecated flags.
pub(super) const ORIGIN: &str = "the deprecated --redis.ss.* flags";

/// The single-queue flags, which a queues array makes irrelevant.
const SINGLE_QUEUE: [&str; 6] = [
    "--redis.ss.igw-base-url",
    "--redis.ss.request-path-url",
    "--redis.ss.request-queue-name",
    "--redis.ss.gate-type",
    "--redis.ss.gate-params",
    "--redis.ss.inference-objective",
];

/// Each deprecated flag, with what replaces it; [`given`] checks them in this order.
const REPLACED_BY: [(&str, &str); 14] = [
    ("--message-queue-impl", "--transport"),
    ("--redis.url", "url in --transport-config (or REDIS_URL)"),
    (
        "--redis.ss.result-queue-name",
        "result_queue_name in --transport-config",
    ),
    (
        "--redis.ss.poll-interval-ms",
        "poll_interval_ms in --transport-config",
    ),
    ("--redis.ss.batch-size", "batch_size in --transport-config"),
    ("--redis.ss.queues-config", "queues in --transport-config"),
    (
        "--redis.ss.queues-config-file",
        "queues in --transport-config-file",
    ),
    (
        SINGLE_QUEUE[0],
        "queues[].igw_base_url in --transport-config",
    ),
    (
        SINGLE_QUEUE[1],
        "queues[].request_path_url in --transport-config",
    ),
    (SINGLE_QUEUE[2], "queues[].queue_name in --transport-config"),
    (SINGLE_QUEUE[3], "queues[].gate_type in --transport-config"),
    (
        SINGLE_QUEUE[4],
        "queues[].gate_params in --transport-config",
    ),
    (
        SINGLE_QUEUE[5],
        "queues[].inference_objective in --transport-config",
    ),
    ("--redis-tracing", "enable_tracing in --transport-config"),
];

/// Each deprecated flag given, with what replaces it.
fn given(flags: &LegacyFlags) -> Vec<(&'static str, &'static str)> {
    // One entry per row of REPLACED_BY, in its order.
    let present = [
        flags.message_queue_impl.is_some(),
        flags.legacy_redis_url.is_some(),
        flags.ss_result_queue_name.is_some(),
        flags.ss_poll_interval_ms.is_some(),
        flags.ss_batch_size.is_some(),
        flags.ss_queues_config.is_some(),
        flags.ss_queues_config_file.is_some(),
        flags.ss_igw_base_url.is_some(),
        flags.ss_request_path_url.is_some(),
        flags.ss_request_queue_name.is_some(),
        flags.ss_gate_type.is_some(),
        flags.ss_gate_params.is_some(),
        flags.ss_inference_objective.is_some(),
        flags.redis_tracing.is_some(),
    ];
    REPLACED_BY
        .into_iter()
        .zip(present)
        .filter(|(_, on)| *on)
        .map(|(replaced, _)| replaced)
        .collect()
}

/// The transport config the deprecated flags describe, or `None` when none
/// is given or a `--transport*` flag wins over them.
pub(super) fn legacy_config(
    args: &RunArgs,
    new_flags: bool,
    notes: &mut Vec<String>,
) -> Result<Option<TransportConfig>, SettingsError> {
    let flags = &args.legacy;
    let given = given(flags);
    if given.is_empty() {
        return Ok(None);
    }
    if new_flags {
        for (flag, instead) in given {
            notes.push(format!(
                "{flag} is ignored: a --transport* flag is given, and those win over the deprecated flags (use {instead})"
            ));
        }
        return Ok(None);
    }
    if let Some(name) = flags
        .message_queue_impl
        .as_deref()
        .filter(|n| *n != "redis-sortedset")
    {
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
        queues: Some(queues(args, &given, notes)?),
        ..TransportConfig::default()
    }))
}

/// The queues: the JSON array, else the file's array, else one queue from the single-queue flags.
fn queues(
    args: &RunArgs,
    given: &[(&str, &str)],
    notes: &mut Vec<String>,
) -> Result<Vec<QueueConfig>, SettingsError> {
    let flags = &args.legacy;
    let array = match (&flags.ss_queues_config, &flags.ss_queues_config_file) {
        (Some(json), file) => {
            if file.is_some() {
                notes.push(
                    "--redis.ss.queues-config-file is ignored: --redis.ss.queues-config wins"
                        .into(),
                );
            }
            Some(QueueConfig::list_from_json(
                json,
                "--redis.ss.queues-config",
            )?)
        }
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|source| {
                SettingsError::UnreadableConfigFile {
                    flag: "--redis.ss.queues-config-file".into(),
                    path: path.clone(),
                    source,
                }
            })?;
            let origin = format!("--redis.ss.queues-config-file {}", path.display());
            Some(QueueConfig::list_from_json(&text, &origin)?)
        }
        (None, None) => None,
    };
    if let Some(array) = array {
        let ours = args.igw_base_url.is_some().then_some("--igw-base-url");
        let single = given
            .iter()
            .map(|(f, _)| *f)
            .filter(|f| SINGLE_QUEUE.contains(f));
        for flag in single.chain(ours) {
            notes.push(format!(
                "{flag} is ignored: the queues array configures the queues"
            ));
        }
        return Ok(array);
    }
    let gate_params = match flags.ss_gate_params.as_deref() {
        None | Some("") => BTreeMap::new(),
        Some(json) => serde_json::from_str(json).map_err(|e| SettingsError::ConfigValue {
            origin: "--redis.ss.gate-params".into(),
            field: "(top level)".into(),
            detail: e.to_string(),
            fix: "give a JSON object of strings, numbers or booleans, such as {}".into(),
        })?,
    };
    Ok(vec![QueueConfig {
        queue_name: Some(
            flags
                .ss_request_queue_name
                .clone()
                .unwrap_or_else(|| wire::DEFAULT_QUEUE.into()),
        ),
        worker_pool_id: Some(DEFAULT_POOL.into()),
        inference_objective: flags.ss_inference_objective.clone(),
        igw_base_url: flags.ss_igw_base_url.clone().or(args.igw_base_url.clone()),
        request_path_url: flags
            .ss_request_path_url
            .clone()
            .or(Some(args.request_path_url.clone())),
        gate_type: flags.ss_gate_type.clone(),
        gate_params: Some(gate_params),
        ..QueueConfig::default()
    }])
}
