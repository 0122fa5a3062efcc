//! The limits every setting must stay within, in one place, and the startup check of configured key names.
//!
//! The store-side limits (shortest lease, longest dedup TTL, largest batch a
//! script call takes) are claim-core's constants, which `StoreConfig::validate`
//! enforces too; [`check_bounds`] runs first so the message names the flag
//! and the config field an operator sets.

use super::error::SettingsError;
use async_worker::config::RuntimeConfig;
use claim_core::store::StoreConfig;
pub use claim_core::store::{
    MAX_BATCH, MAX_RESULT_DEDUP_TTL_MS as MAX_DEDUP_TTL_MS, MIN_LEASE_TTL_MS as MIN_LEASE_MS,
};

/// Most requests handled at once per replica: bounds the ack and renew
/// batches the runtime builds from held claims (chunked, but each chunk
/// still travels in one call) and the memory held for them.
pub const MAX_CONCURRENCY: usize = 10_000;

/// Checks the bounds above; the error names the field and the fix.
pub fn check_bounds(store: &StoreConfig, runtime: &RuntimeConfig) -> Result<(), SettingsError> {
    // (out of bounds, field, detail, fix), in the order they are reported.
    let checks = [
        (
            store.lease_ttl_ms < MIN_LEASE_MS,
            "claim lease TTL (--claim-lease-ttl / claim_lease_ttl_seconds)",
            format!(
                "{} ms is below the minimum of {} s (heartbeats renew every ttl/3, at least 1 s apart)",
                store.lease_ttl_ms,
                MIN_LEASE_MS / 1000
            ),
            format!("set it to {}s or more", MIN_LEASE_MS / 1000),
        ),
        (
            store.result_dedup_ttl_ms > MAX_DEDUP_TTL_MS,
            "result dedup TTL (--result-dedup-ttl / result_dedup_ttl_seconds)",
            format!(
                "{} s is above the maximum of 30 days",
                store.result_dedup_ttl_ms / 1000
            ),
            format!("set it to 30 days ({} s) or less", MAX_DEDUP_TTL_MS / 1000),
        ),
        (
            runtime.batch_size > MAX_BATCH,
            "batch_size",
            format!(
                "{} is above the {MAX_BATCH} members one claim call handles",
                runtime.batch_size
            ),
            format!("set batch_size to {MAX_BATCH} or less"),
        ),
        (
            runtime.concurrency > MAX_CONCURRENCY,
            "--concurrency",
            format!(
                "{} is above the maximum of {MAX_CONCURRENCY}",
                runtime.concurrency
            ),
            format!("set it to {MAX_CONCURRENCY} or less, and run more replicas instead"),
        ),
    ];
    match checks.into_iter().find(|check| check.0) {
        Some((_, field, detail, fix)) => Err(SettingsError::invalid(field, detail, fix)),
        None => Ok(()),
    }
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
