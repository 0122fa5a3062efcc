//! Flow-control settings: the worker pools file, the merge-policy and transform files, and the gate flags, read once at start with Go's errors.

use std::time::Duration;

use super::go::go_duration as duration;
use super::{GoFlags, SettingsError};
use async_worker::config::PoolSpec;
use async_worker::gate::GateParams;
use async_worker::merge_policy::MergePolicy;
use async_worker::transform::Transforms;

/// One `--pool-config-file` entry: a pool, its workers and its pool gate.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolSettings {
    pub id: String,
    pub workers: usize,
    /// `""` or `none`: no pool gate.
    pub gate_type: String,
    pub gate_params: GateParams,
}

impl PoolSettings {
    pub fn spec(&self) -> PoolSpec {
        PoolSpec::new(self.id.clone(), self.workers)
    }
}

/// Everything about flow control the processor reads at start.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FlowSettings {
    /// The pools file's pools; empty without one (one `default` pool with
    /// `--concurrency` workers).
    pub pools: Vec<PoolSettings>,
    /// `--request-merge-policy-config-file`; `None`: random-robin.
    pub merge_policy: Option<MergePolicy>,
    /// `--transform-config-file`; empty without one.
    pub transforms: Transforms,
    /// `--prometheus-url`.
    pub prometheus_url: Option<String>,
    /// `--prometheus-cache-ttl` (5 s; zero turns caching off).
    pub prometheus_cache_ttl: Duration,
    /// `--gate-wait-timeout` (5 m; zero: until the deadline).
    pub gate_wait_timeout: Duration,
}

/// Reads the flow-control flags and files. `has_queue_config`: a transport
/// or legacy queues config was given (Go requires one for a pools file).
pub(super) fn resolve_flow(
    flags: &GoFlags,
    has_queue_config: bool,
) -> Result<FlowSettings, SettingsError> {
    let given = |v: &Option<String>| v.as_deref().filter(|v| !v.is_empty()).map(str::to_owned);
    let pools = match given(&flags.pool_config_file) {
        None => Vec::new(),
        Some(_) if !has_queue_config => {
            return Err(SettingsError::invalid(
                "--pool-config-file",
                "pool-config-file can only be specified when a transport/queues config is also specified",
                "give the queues with --transport-config (or --transport-config-file), naming each queue's worker_pool_id",
            ));
        }
        Some(path) => read_pools(&path)?,
    };
    let duration = |flag, value, default| given(value).map_or(Ok(default), |v| duration(flag, &v));
    let policy = "fix the policy file: {\"type\": \"random-robin\" | \"tier-priority\", \"parameters\": {…}}";
    let transform =
        "fix the transform file: {\"requestTransforms\": [{\"name\", \"type\", \"parameters\"}]}";
    Ok(FlowSettings {
        pools,
        merge_policy: parse_file(
            "--request-merge-policy-config-file",
            given(&flags.request_merge_policy_config_file),
            "failed to read merge policy config file",
            policy,
            MergePolicy::from_json,
        )?,
        transforms: parse_file(
            "--transform-config-file",
            given(&flags.transform_config_file),
            "failed to read transform config file",
            transform,
            Transforms::from_json,
        )?
        .unwrap_or_default(),
        prometheus_url: given(&flags.prometheus_url),
        prometheus_cache_ttl: duration(
            "--prometheus-cache-ttl",
            &flags.prometheus_cache_ttl,
            Duration::from_secs(5),
        )?,
        gate_wait_timeout: duration(
            "--gate-wait-timeout",
            &flags.gate_wait_timeout,
            Duration::from_secs(300),
        )?,
    })
}

/// A file flag's contents read by `parse`, whose error `fix` follows; `None` without the flag.
fn parse_file<T>(
    flag: &str,
    path: Option<String>,
    what: &str,
    fix: &str,
    parse: fn(&str) -> Result<T, String>,
) -> Result<Option<T>, SettingsError> {
    let text = path.map(|path| read(flag, &path, what)).transpose()?;
    (text.map(|text| parse(&text)).transpose()).map_err(|e| SettingsError::invalid(flag, e, fix))
}

fn read(flag: &str, path: &str, what: &str) -> Result<String, SettingsError> {
    std::fs::read_to_string(path).map_err(|e| {
        SettingsError::invalid(
            flag,
            format!("{what}: {path}: {e}"),
            "check the path and its permissions (the chart mounts its ConfigMap at /etc/llm-d-async/config)",
        )
    })
}

/// The pools file: a JSON array of `{id, workers, gate_type, gate_params}`,
/// unknown keys ignored, with Go's errors.
fn read_pools(path: &str) -> Result<Vec<PoolSettings>, SettingsError> {
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Entry {
        id: String,
        workers: i64,
        gate_type: Option<String>,
        gate_params: Option<GateParams>,
    }
    let flag = "--pool-config-file";
    let text = read(flag, path, "failed to read pool config file")?;
    let refused = |detail: String| {
        SettingsError::invalid(
            flag,
            detail,
            "give a JSON array of pools such as [{\"id\": \"default\", \"workers\": 8}]",
        )
    };
    let entries: Vec<Entry> = serde_json::from_str(&text)
        .map_err(|e| refused(format!("failed to unmarshal pool config: {e}")))?;
    let mut pools: Vec<PoolSettings> = Vec::with_capacity(entries.len());
    for (index, entry) in entries.into_iter().enumerate() {
        if entry.id.is_empty() {
            return Err(refused(format!(
                "pool config at index {index} has an empty ID"
            )));
        }
        if entry.workers < 1 {
            return Err(refused(format!(
                "pool {:?} must have at least 1 worker",
                entry.id
            )));
        }
        if pools.iter().any(|p| p.id == entry.id) {
            return Err(refused(format!("duplicate pool ID found: {:?}", entry.id)));
        }
        pools.push(PoolSettings {
            id: entry.id,
            workers: usize::try_from(entry.workers).unwrap_or(usize::MAX),
            gate_type: entry.gate_type.unwrap_or_default(),
            gate_params: entry.gate_params.unwrap_or_default(),
        });
    }
    Ok(pools)
}
