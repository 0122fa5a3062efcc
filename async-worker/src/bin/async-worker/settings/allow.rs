//! The optional result-list allow-list settings (`allowed_result_lists`, top level and per queue), checked into claim-core's `AllowList`.

use std::collections::BTreeMap;

use claim_core::routing::AllowList;

use super::error::SettingsError;
use super::transport::{TransportConfig, set};

/// An `allowed_result_lists` setting (at `at`, `""` for the top level).
pub(super) fn allow_list(
    entries: &Option<Vec<String>>,
    origin: &str,
    at: &str,
) -> Result<Option<AllowList>, SettingsError> {
    let Some(entries) = entries else {
        return Ok(None);
    };
    AllowList::new(entries.clone())
        .map(Some)
        .map_err(|detail| SettingsError::ConfigValue {
            origin: origin.to_owned(),
            field: format!("{at}allowed_result_lists"),
            detail,
            fix: "list result list names, or prefixes ending in *".to_owned(),
        })
}

/// Each configured queue's own `allowed_result_lists`, by queue name.
pub(super) fn queue_allow_lists(
    config: &TransportConfig,
    origin: &str,
) -> Result<BTreeMap<String, AllowList>, SettingsError> {
    let mut out = BTreeMap::new();
    for (i, queue) in config.queues.iter().flatten().enumerate() {
        let at = format!("queues[{i}].");
        if let (Some(name), Some(allow)) = (
            set(&queue.queue_name),
            allow_list(&queue.allowed_result_lists, origin, &at)?,
        ) {
            out.insert(name.to_owned(), allow);
        }
    }
    Ok(out)
}
