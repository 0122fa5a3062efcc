//! The redis-sortedset transport config JSON, with the Go processor's field names, and what becomes of a field neither we nor Go know.
//!
//! Every Go field is accepted. A field neither we nor Go know is kept aside
//! (`unknown`) and reported by its path, e.g. `queues[0].gate`, with the
//! closest known field: a warning, as Go ignores it, or a refusal under
//! `--strict-config`. As in Go, `0`, `""` and `null` mean "not set" (the
//! flag or built-in default applies); a negative number is an error. Every
//! field may be left out. The field table of docs/OPERATIONS.md ("Transport
//! config") is checked against these types (`settings/tests/docs.rs`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::SettingsError;

/// `--transport-config` / `--transport-config-file` for `redis-sortedset`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct TransportConfig {
    /// Redis URL; wins over `--redis-url` / `REDIS_URL`.
    pub url: Option<String>,
    /// `""`/`standalone`, `cluster` or `sentinel`.
    pub mode: Option<String>,
    /// Extra cluster seeds or the sentinels; refused in standalone mode.
    pub addrs: Option<Vec<String>>,
    /// The sentinel master's name; required by sentinel mode, refused otherwise.
    pub master_name: Option<String>,
    /// The retry sorted set (default `retry-sortedset`).
    pub retry_queue_name: Option<String>,
    /// The default result list (default `result-list`).
    pub result_queue_name: Option<String>,
    /// Pause between polls when a batch came back short (default 1000).
    pub poll_interval_ms: Option<i64>,
    /// Members peeked per poll (default 10).
    pub batch_size: Option<i64>,
    /// A tracing span per Redis call, exported with the request spans.
    pub enable_tracing: Option<bool>,
    /// Wins over `--claim-lease-ttl`.
    pub claim_lease_ttl_seconds: Option<i64>,
    /// Wins over `--claim-reclaim-interval`.
    pub claim_reclaim_interval_ms: Option<i64>,
    /// Wins over `--result-dedup-ttl`.
    pub result_dedup_ttl_seconds: Option<i64>,
    /// Wins over `--max-deliveries`; here `0` means unlimited, as with the flag.
    pub max_deliveries: Option<i64>,
    /// Ours: replicas each claim and ack batch waits for (`WAIT`);
    /// Wins over `--replica-acks`. 0 = none.
    pub replica_acks: Option<i64>,
    /// Ours: PEM CA bundle for a `rediss://` URL; `--redis-tls-ca-file` wins.
    pub redis_tls_ca_file: Option<String>,
    /// Ours: PEM client certificate; `--redis-tls-cert-file` wins.
    pub redis_tls_cert_file: Option<String>,
    /// Ours: PEM key of the client certificate; `--redis-tls-key-file` wins.
    pub redis_tls_key_file: Option<String>,
    /// Ours: the address the metrics and health endpoints listen on; `--bind-address` wins.
    pub bind_address: Option<String>,
    /// Ours: refuse to start when Redis misses the durability contract; `--require-durability` wins.
    pub require_durability: Option<bool>,
    /// Ours: refuse fields this processor does not know; `--strict-config` wins.
    pub strict_config: Option<bool>,
    /// Ours: the result lists a member may name (exact names and `prefix*`
    /// patterns), beside the configured ones; unset: any (Go parity). A
    /// queue's own list replaces it for that queue.
    pub allowed_result_lists: Option<Vec<String>>,
    /// The queues to drain; at least one.
    pub queues: Option<Vec<QueueConfig>>,
    /// Fields neither we nor Go know, by name (reported, never used).
    #[serde(flatten)]
    pub unknown: BTreeMap<String, serde_json::Value>,
}

/// One `queues[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct QueueConfig {
    /// Defaults to `queue_name`; must be unique.
    pub id: Option<String>,
    /// The pending sorted set; required and unique.
    pub queue_name: Option<String>,
    /// Result list for this queue's records, over the member's and the default.
    pub result_queue_name: Option<String>,
    /// `EXPIRE` (seconds) set on the result list after each push; 0 = none.
    pub result_ttl_seconds: Option<i64>,
    /// Defaults to `default`; carried for metrics, pools are not modelled.
    pub worker_pool_id: Option<String>,
    /// Sent as the `x-gateway-inference-objective` header when set.
    pub inference_objective: Option<String>,
    /// Path joined to `igw_base_url` (default `/v1/completions`).
    pub request_path_url: Option<String>,
    /// The inference gateway's base URL; required.
    pub igw_base_url: Option<String>,
    /// Only `""`/`none` (no gate) in this version.
    pub gate_type: Option<String>,
    /// Gate parameters: strings, numbers, booleans or null, as Go's `StringMap`.
    pub gate_params: Option<async_worker::gate::GateParams>,
    /// Static labels for this queue's requests.
    pub labels: Option<BTreeMap<String, String>>,
    /// Ours: this queue's `allowed_result_lists`, replacing the top-level one.
    pub allowed_result_lists: Option<Vec<String>>,
    /// Fields neither we nor Go know, by name (reported, never used).
    #[serde(flatten)]
    pub unknown: BTreeMap<String, serde_json::Value>,
}

impl TransportConfig {
    /// The fields neither we nor Go know, by path (`batchsize`,
    /// `queues[0].gate`) in document order per level, each with the closest
    /// known field's path when one is near (`batch_size`).
    pub fn unknown_fields(&self) -> Vec<(String, Option<String>)> {
        let top = known_fields::<TransportConfig>();
        let mut paths: Vec<_> = (self.unknown.keys())
            .map(|k| (k.clone(), closest(k, &top)))
            .collect();
        let in_queue = known_fields::<QueueConfig>();
        for (i, queue) in self.queues.iter().flatten().enumerate() {
            let at = |k: &str| format!("queues[{i}].{k}");
            paths.extend(
                (queue.unknown.keys()).map(|k| (at(k), closest(k, &in_queue).map(|c| at(&c)))),
            );
        }
        paths
    }
}

/// The fields of a config type, as serde names them.
pub fn known_fields<T: Default + Serialize>() -> Vec<String> {
    match serde_json::to_value(T::default()) {
        Ok(serde_json::Value::Object(fields)) => fields.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// The known field nearest `name` by edit distance, when it is near enough
/// to be a misspelling of it (a quarter of the name's letters, at least 2).
fn closest(name: &str, known: &[String]) -> Option<String> {
    let near = (name.len() / 4).max(2);
    (known.iter())
        .map(|k| (strsim::levenshtein(name, k), k))
        .filter(|(distance, _)| *distance <= near)
        .min()
        .map(|(_, k)| k.clone())
}

/// A JSON document given inline (`inline`: its flag and text) or in a file
/// (`file`: its flag and path), parsed, with how messages name it; `None`
/// when neither is given. `top` is the fix when the document has the wrong shape.
pub(super) fn load<T: serde::de::DeserializeOwned>(
    inline: (&str, Option<&String>),
    file: (&str, Option<&PathBuf>),
    top: &str,
) -> Result<Option<(T, String)>, SettingsError> {
    let (text, origin) = match (inline, file) {
        ((flag, Some(json)), _) => (json.clone(), flag.to_owned()),
        (_, (flag, Some(path))) => (
            std::fs::read_to_string(path).map_err(|e| SettingsError::unreadable(flag, path, e))?,
            format!("{flag} {}", path.display()),
        ),
        _ => return Ok(None),
    };
    Ok(Some((parse_json(&text, &origin, top)?, origin)))
}

/// Parses `text` as `T`; `top` is the fix when the document itself has the wrong shape.
fn parse_json<T: serde::de::DeserializeOwned>(
    text: &str,
    origin: &str,
    top: &str,
) -> Result<T, SettingsError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| field_error(origin, e.path().to_string(), e.into_inner(), top))?;
    de.end().map_err(|e| syntax_error(origin, e))?;
    Ok(value)
}

fn field_error(origin: &str, path: String, error: serde_json::Error, top: &str) -> SettingsError {
    use serde_json::error::Category;
    if matches!(
        error.classify(),
        Category::Syntax | Category::Eof | Category::Io
    ) {
        return syntax_error(origin, error);
    }
    let detail = error.to_string();
    // The field's own type, as serde names it last: "…, expected i64 at line 1 column 9".
    let expected = detail.rsplit(", expected ").next().unwrap_or_default();
    let expected = expected.split(" at line ").next().unwrap_or_default();
    let leaf = path.rsplit('.').next().unwrap_or(&path);
    let fix = match leaf.split('[').next().unwrap_or(leaf) {
        "queues" => "give queues a list of queue objects",
        "addrs" => "give addrs a list of host:port strings",
        "gate_params" => "give gate_params an object of strings, numbers or booleans",
        "labels" => "give labels an object of string values",
        "allowed_result_lists" => {
            "give allowed_result_lists a list of list names or prefix* patterns"
        }
        "" | "." => top,
        _ if expected == "i64" => "give it a whole number",
        _ if expected == "a boolean" => "give it true or false",
        _ => "give it a string",
    };
    let field = if path == "." { "(top level)" } else { &path };
    SettingsError::invalid(format!("{origin}: {field}"), detail, fix)
}

fn syntax_error(origin: &str, error: serde_json::Error) -> SettingsError {
    let origin = format!("{origin} is not valid JSON");
    SettingsError::invalid(origin, error.to_string(), "fix the JSON syntax there")
}

/// A non-empty string: `""` and `null` read as unset, as in Go.
pub(crate) fn set(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|s| !s.is_empty())
}
