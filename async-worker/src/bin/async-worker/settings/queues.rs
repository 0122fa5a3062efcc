//! The queues to drain: the default one from flags, or `queues[]` of the transport config, checked.

use std::collections::{BTreeMap, BTreeSet};

use claim_core::wire;

use super::error::SettingsError;
use super::transport::{QueueConfig, gate_params, positive, set};
use super::{QueueSettings, RunArgs};
use async_worker::config::QueueSpec;
use async_worker::http_handler::HttpTarget;

const DEFAULT_REQUEST_PATH: &str = "/v1/completions";
use async_worker::config::DEFAULT_POOL as DEFAULT_WORKER_POOL;

pub(super) fn default_queue(args: &RunArgs) -> Result<(QueueSpec, QueueSettings), SettingsError> {
    let fix = "pass --igw-base-url http://gateway:80, or give a transport config whose queues[] set igw_base_url";
    let Some(base) = args.igw_base_url.as_deref().filter(|u| !u.is_empty()) else {
        return Err(SettingsError::MissingIgwBaseUrl {
            field: "--igw-base-url".into(),
            fix: fix.into(),
        });
    };
    let target = target("--igw-base-url", base, &args.request_path_url, None)?;
    let spec = QueueSpec::new(wire::DEFAULT_QUEUE);
    let queue = QueueSettings {
        id: spec.id.clone(),
        queue_name: spec.queue_name.clone(),
        target,
        worker_pool_id: DEFAULT_WORKER_POOL.into(),
        labels: BTreeMap::new(),
        gate_type: String::new(),
        gate_params: Default::default(),
    };
    Ok((spec, queue))
}

pub(super) fn configured_queues(
    queues: Option<&[QueueConfig]>,
    origin: &str,
) -> Result<Vec<(QueueSpec, QueueSettings)>, SettingsError> {
    let queues = queues.unwrap_or_default();
    if queues.is_empty() {
        return Err(SettingsError::ConfigValue {
            origin: origin.to_owned(),
            field: "queues".into(),
            detail: "no queue is configured".into(),
            fix: "add at least one queue object with queue_name and igw_base_url".into(),
        });
    }
    let (mut ids, mut names) = (BTreeSet::new(), BTreeSet::new());
    let mut out = Vec::with_capacity(queues.len());
    for (i, q) in queues.iter().enumerate() {
        let at = |field: &str| format!("queues[{i}].{field}");
        let value_error = |field: &str, detail: String, fix: &str| SettingsError::ConfigValue {
            origin: origin.to_owned(),
            field: at(field),
            detail,
            fix: fix.to_owned(),
        };
        let Some(queue_name) = set(&q.queue_name) else {
            return Err(value_error(
                "queue_name",
                "is missing".into(),
                "name the pending sorted set, e.g. \"queue_name\": \"request-sortedset\"",
            ));
        };
        let Some(base) = set(&q.igw_base_url) else {
            return Err(SettingsError::MissingIgwBaseUrl {
                field: format!("{origin}: {}", at("igw_base_url")),
                fix: format!("add \"igw_base_url\": \"http://gateway:80\" to {}", at("")),
            });
        };
        let id = set(&q.id).unwrap_or(queue_name);
        if !ids.insert(id.to_owned()) {
            return Err(value_error(
                "id",
                format!("{id:?} is used twice"),
                "give every queue its own id",
            ));
        }
        if !names.insert(queue_name.to_owned()) {
            return Err(value_error(
                "queue_name",
                format!("{queue_name:?} is configured twice"),
                "list each pending sorted set once",
            ));
        }
        // Whether the pool exists is checked against the pools file (or
        // the implicit `default`) once every queue is read.
        let pool = set(&q.worker_pool_id).unwrap_or(DEFAULT_WORKER_POOL);
        let path = set(&q.request_path_url).unwrap_or(DEFAULT_REQUEST_PATH);
        let objective = set(&q.inference_objective).map(str::to_owned);
        let target = target(
            &format!("{origin}: {}", at("igw_base_url")),
            base,
            path,
            objective,
        )?;
        let spec = QueueSpec {
            id: id.to_owned(),
            queue_name: queue_name.to_owned(),
            result_queue_name: set(&q.result_queue_name).map(str::to_owned),
            result_ttl_seconds: positive(q.result_ttl_seconds, origin, &at("result_ttl_seconds"))?,
            pool_name: pool.to_owned(),
            labels: q.labels.clone().unwrap_or_default(),
        };
        let queue = QueueSettings {
            id: id.to_owned(),
            queue_name: queue_name.to_owned(),
            target,
            worker_pool_id: pool.to_owned(),
            labels: q.labels.clone().unwrap_or_default(),
            gate_type: set(&q.gate_type).unwrap_or_default().to_owned(),
            gate_params: gate_params(&q.gate_params),
        };
        out.push((spec, queue));
    }
    Ok(out)
}

fn target(
    field: &str,
    base: &str,
    path: &str,
    objective: Option<String>,
) -> Result<HttpTarget, SettingsError> {
    HttpTarget::new(base, path, objective).map_err(|e| {
        SettingsError::invalid(
            field,
            e.to_string(),
            "give the gateway's base URL, such as http://gateway:80",
        )
    })
}
