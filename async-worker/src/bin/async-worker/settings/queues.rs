//! The queues to drain: the default one from flags, or `queues[]` of the transport config, checked; and the result-list allow-lists (`allowed_result_lists`, top level and per queue).

use std::collections::{BTreeMap, BTreeSet};

use claim_core::routing::AllowList;
use claim_core::wire;

use super::config::set;
use super::sources::Sources;
use super::{QueueSettings, RunArgs, SettingsError};
use async_worker::config::DEFAULT_POOL as DEFAULT_WORKER_POOL;
use async_worker::config::QueueSpec;
use async_worker::http_handler::HttpTarget;

const DEFAULT_REQUEST_PATH: &str = "/v1/completions";

/// The one queue without a transport config: `request-sortedset`, to `--igw-base-url`.
pub(super) fn default_queue(args: &RunArgs) -> Result<(QueueSpec, QueueSettings), SettingsError> {
    let fix = "pass --igw-base-url http://gateway:80, or give a transport config whose queues[] set igw_base_url";
    let Some(base) = args.igw_base_url.as_deref().filter(|u| !u.is_empty()) else {
        return Err(missing_igw_base_url("--igw-base-url".into(), fix.into()));
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

/// The configured `queues[]`, each checked.
pub(super) fn configured(s: &Sources) -> Result<Vec<(QueueSpec, QueueSettings)>, SettingsError> {
    let (queues, origin) = (s.config.queues.as_deref().unwrap_or_default(), &s.origin);
    if queues.is_empty() {
        let fix = "add at least one queue object with queue_name and igw_base_url";
        return Err(s.error("queues", "no queue is configured".into(), fix));
    }
    let (mut ids, mut names) = (BTreeSet::new(), BTreeSet::new());
    let mut out = Vec::with_capacity(queues.len());
    for (i, q) in queues.iter().enumerate() {
        let at = |field: &str| format!("queues[{i}].{field}");
        let value_error = |field: &str, detail: String, fix: &str| s.error(at(field), detail, fix);
        let Some(queue_name) = set(&q.queue_name) else {
            return Err(value_error(
                "queue_name",
                "is missing".into(),
                "name the pending sorted set, e.g. \"queue_name\": \"request-sortedset\"",
            ));
        };
        let Some(base) = set(&q.igw_base_url) else {
            let input = format!("{origin}: {}", at("igw_base_url"));
            let fix = format!("add \"igw_base_url\": \"http://gateway:80\" to {}", at(""));
            return Err(missing_igw_base_url(input, fix));
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
            result_ttl_seconds: s.positive(q.result_ttl_seconds, &at("result_ttl_seconds"))?,
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
            gate_params: q.gate_params.clone().unwrap_or_default(),
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

fn missing_igw_base_url(input: String, fix: String) -> SettingsError {
    let detail = "every queue needs the inference gateway's base URL";
    SettingsError::invalid(format!("{input} is missing"), detail, fix)
}

/// An `allowed_result_lists` setting (at `at`, `""` for the top level).
pub(super) fn allow_list(
    s: &Sources,
    entries: &Option<Vec<String>>,
    at: &str,
) -> Result<Option<AllowList>, SettingsError> {
    let Some(entries) = entries else {
        return Ok(None);
    };
    let fix = "list result list names, or prefixes ending in *";
    (AllowList::new(entries.clone()).map(Some))
        .map_err(|detail| s.error(format!("{at}allowed_result_lists"), detail, fix))
}

/// Each configured queue's own `allowed_result_lists`, by queue name.
pub(super) fn queue_allow_lists(s: &Sources) -> Result<BTreeMap<String, AllowList>, SettingsError> {
    let mut out = BTreeMap::new();
    for (i, queue) in s.config.queues.iter().flatten().enumerate() {
        let allow = allow_list(s, &queue.allowed_result_lists, &format!("queues[{i}]."))?;
        if let (Some(name), Some(allow)) = (set(&queue.queue_name), allow) {
            out.insert(name.to_owned(), allow);
        }
    }
    Ok(out)
}
