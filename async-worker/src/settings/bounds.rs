//! The limits every setting must stay within, in one place, and the startup check of configured key names.
//!
//! The store engineer is moving the store-side bounds (lease, dedup TTL,
//! largest batch a script handles) into `claim_core::store::StoreConfig::validate`
//! and its constants; until they land they live here, and
//! [`check_bounds`] runs after that `validate`, so whichever is stricter wins.

use super::error::SettingsError;
use crate::config::RuntimeConfig;
use claim_core::store::StoreConfig;

/// Shortest lease: heartbeats renew every ttl/3, which must be at least 1 s.
pub const MIN_LEASE_MS: u64 = 3_000;
/// Longest terminal-marker lifetime (Redis keeps any TTL, but a marker this
/// old only costs memory: a redelivery chain is minutes to hours long).
pub const MAX_DEDUP_TTL_MS: u64 = 30 * 24 * 3_600 * 1_000;
/// Largest claim batch (`batch_size`): members per claim script call. The
/// scripts unpack their arguments onto Lua's stack, which holds about 8000
/// values; a claim item takes a few.
pub const MAX_BATCH: usize = 1_000;
/// Most requests handled at once per replica: bounds the ack and renew
/// batches the runtime builds from held claims (chunked, but each chunk
/// still travels in one call) and the memory held for them.
pub const MAX_CONCURRENCY: usize = 10_000;

/// Checks the bounds above; the error names the field and the fix.
pub fn check_bounds(store: &StoreConfig, runtime: &RuntimeConfig) -> Result<(), SettingsError> {
    if store.lease_ttl_ms < MIN_LEASE_MS {
        return Err(SettingsError::invalid(
            "claim lease TTL (--claim-lease-ttl / claim_lease_ttl_seconds)",
            format!(
                "{} ms is below the minimum of 3 s (heartbeats renew every ttl/3, at least 1 s apart)",
                store.lease_ttl_ms
            ),
            "set it to 3s or more",
        ));
    }
    if store.result_dedup_ttl_ms > MAX_DEDUP_TTL_MS {
        return Err(SettingsError::invalid(
            "result dedup TTL (--result-dedup-ttl / result_dedup_ttl_seconds)",
            format!(
                "{} s is above the maximum of 30 days",
                store.result_dedup_ttl_ms / 1000
            ),
            "set it to 30 days (2592000 s) or less",
        ));
    }
    if runtime.batch_size > MAX_BATCH {
        return Err(SettingsError::invalid(
            "batch_size",
            format!(
                "{} is above the {MAX_BATCH} members one claim call handles",
                runtime.batch_size
            ),
            format!("set batch_size to {MAX_BATCH} or less"),
        ));
    }
    if runtime.concurrency > MAX_CONCURRENCY {
        return Err(SettingsError::invalid(
            "--concurrency",
            format!(
                "{} is above the maximum of {MAX_CONCURRENCY}",
                runtime.concurrency
            ),
            format!("set it to {MAX_CONCURRENCY} or less, and run more replicas instead"),
        ));
    }
    Ok(())
}

/// Checks that queue names, the retry set and every result list the
/// configuration names (each queue's, the transport default) cannot meet
/// each other or the bookkeeping keys they imply.
pub fn check_key_names(store: &StoreConfig, runtime: &RuntimeConfig) -> Result<(), SettingsError> {
    let queues: Vec<&str> = runtime
        .queues
        .iter()
        .map(|q| q.queue_name.as_str())
        .collect();
    let mut lists: Vec<&str> = vec![store.default_result_list.as_str()];
    for spec in &runtime.queues {
        if let Some(list) = spec.result_queue_name.as_deref()
            && !lists.contains(&list)
        {
            lists.push(list);
        }
    }
    claim_core::keys::check_names(&queues, &store.retry_set, &lists).map_err(|detail| {
        SettingsError::invalid(
            "key names (queues[].queue_name, retry_queue_name, result_queue_name)",
            detail,
            "names must not collide; see docs/OPERATIONS.md, \"Key names\"",
        )
    })
}
