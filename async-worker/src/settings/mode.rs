//! The transport config's `mode`, `addrs` and `master_name`: Go's rules, then the refusal of the modes not implemented yet.
//!
//! Go accepts `""`/`standalone`, `cluster` and `sentinel`. The checks run in
//! Go's order and name the field; only then are `cluster` and `sentinel`
//! refused, so a config that Go would refuse gets Go's reason first.
//! Cluster and sentinel support is issue 12.

use reqwest::Url;

use super::error::SettingsError;
use super::transport::{TransportConfig, set};

/// The modes Go knows, as written in the config.
const MODES: &str = "\"standalone\" (or \"\"), \"cluster\" or \"sentinel\"";

/// Checks `mode` against `addrs`, `master_name` and the Redis URL (`url`,
/// already resolved); refuses a valid mode this version cannot run.
pub(super) fn check_mode(
    config: &TransportConfig,
    origin: &str,
    url: &str,
) -> Result<(), SettingsError> {
    let error = |field: &str, detail: String, fix: &str| SettingsError::ConfigValue {
        origin: origin.to_owned(),
        field: field.to_owned(),
        detail,
        fix: fix.to_owned(),
    };
    let has_addrs = config.addrs.as_ref().is_some_and(|a| !a.is_empty());
    let master = set(&config.master_name);
    let mode = set(&config.mode).unwrap_or("standalone");
    match mode {
        "standalone" => {
            if has_addrs {
                return Err(error(
                    "addrs",
                    "is set in standalone mode".into(),
                    "remove addrs (it lists cluster seeds or sentinels), or set mode",
                ));
            }
            if master.is_some() {
                return Err(error(
                    "master_name",
                    "is set in standalone mode".into(),
                    "remove master_name (it is for sentinel mode), or set mode to \"sentinel\"",
                ));
            }
            Ok(())
        }
        "cluster" => {
            if master.is_some() {
                return Err(error(
                    "master_name",
                    "is set in cluster mode".into(),
                    "remove master_name (it is for sentinel mode)",
                ));
            }
            if let Some(db) = url_db(url).filter(|db| *db != 0) {
                return Err(error(
                    "url",
                    format!("selects db {db}, and Redis Cluster has only db 0"),
                    "drop the /db part of the URL (or make it /0)",
                ));
            }
            Err(not_implemented(origin, mode))
        }
        "sentinel" => {
            if master.is_none() {
                return Err(error(
                    "master_name",
                    "is missing: sentinel mode needs the monitored master's name".into(),
                    "set master_name, e.g. \"mymaster\"",
                ));
            }
            Err(not_implemented(origin, mode))
        }
        other => Err(error(
            "mode",
            format!("{other:?} is not a mode"),
            &format!("set it to {MODES}"),
        )),
    }
}

fn not_implemented(origin: &str, mode: &str) -> SettingsError {
    SettingsError::UnsupportedMode {
        origin: origin.to_owned(),
        mode: mode.to_owned(),
    }
}

/// The db index a `redis://host/N` URL selects; `None` when it selects none
/// (or the URL cannot say, such as a unix socket path).
fn url_db(url: &str) -> Option<u64> {
    let parsed = Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "redis" | "rediss") {
        return None;
    }
    let path = parsed.path().trim_matches('/');
    if path.is_empty() {
        return None;
    }
    // A db part that is not a number is the Redis client's error to report.
    path.parse().ok()
}
