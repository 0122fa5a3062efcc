//! The `answered-memory` run: the Redis memory an answered request still holds once its dedup window has passed, as a batch producer would see it.
//!
//! The run submits `--answered` Go-format requests (20,000) with deadlines a
//! day away, drains them with the `protected` run's settings over a store
//! whose lease is the shortest allowed (3 s) and whose dedup TTL is
//! `--result-dedup-ttl` (5 s), pops every record off the result list as a
//! consumer would (each id exactly once), then waits out the protocol's
//! bound (the dedup TTL, a lease and a reclaim interval past the drain) and
//! polls `used_memory` until it has stopped falling ([`SETTLED`] without a
//! new low, within [`WAIT_BOUND`]). Memory held per answered request =
//! (`used_memory` then − before the submit) / requests. The keys left are
//! counted by prefix (the key up to its first `:`) with their
//! `MEMORY USAGE`. Before each reading only the bench's own connection is
//! open, and the slow log, the Lua VM with its script cache and the
//! commands' latency histograms are emptied ([`Admin::shed_activity`]):
//! what grows with activity, not with data (on a 2,000-request run about
//! 1.5 MB, 750 B per request), does not enter the difference.

use crate::protected::{Backend, drain};
use crate::report::emit_with;
use crate::server::{Admin, round};
use crate::target::Target;
use crate::{Settings, id_of};
use async_worker::RuntimeConfig;
use claim_core::config::MIN_LEASE_TTL_MS;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Deadlines a day away, as a batch producer gives them.
const DEADLINE_SECS: i64 = 86_400;
/// How long `used_memory` must go without a new low to count as settled.
const SETTLED: Duration = Duration::from_secs(5);
/// How long past the protocol's bound the run waits for that at most.
const WAIT_BOUND: Duration = Duration::from_secs(120);
const SAMPLE: Duration = Duration::from_millis(250);

pub async fn run(name: &str, url: &str, set: &Settings, answered: usize, dedup: Duration) {
    let dedup_ms = u64::try_from(dedup.as_millis()).unwrap_or(u64::MAX);
    assert!(
        dedup_ms > MIN_LEASE_TTL_MS,
        "bench: --result-dedup-ttl {} s: the dedup TTL must exceed the run's lease ({} s); give more",
        dedup.as_secs(),
        MIN_LEASE_TTL_MS / 1000
    );
    let set = Settings {
        requests: answered,
        deadline_secs: DEADLINE_SECS,
        ..set.clone()
    };
    // The bench's own connection for the readings: the target's (which
    // enqueues) and the store's pool are closed before each, so neither
    // their buffers nor their client state enter the difference.
    let admin = Admin::connect(url).await.expect("connect to Redis");
    let backend = || async {
        let mut target = Target::standalone(url, &set).await;
        target.store_config.lease_ttl_ms = MIN_LEASE_TTL_MS;
        target.store_config.result_dedup_ttl_ms = dedup_ms;
        Backend::Redis(Arc::new(target))
    };
    backend().await.flush().await;
    let before = quiet_memory(&admin).await;
    let drained = drain(&set, &backend().await, 1).await;
    let answered_at = Instant::now();
    let records = consume(&admin, &set.list, answered).await;
    let bound =
        dedup + Duration::from_millis(MIN_LEASE_TTL_MS) + RuntimeConfig::default().reclaim_interval;
    let (after, settled) = settle(&admin, answered_at + bound).await;
    let waited = answered_at.elapsed();
    let left = by_prefix(&admin.keys_with_usage().await.expect("SCAN"));
    // The bench's own connection's buffers are not the requests' either.
    let held = (after.used - after.clients) as f64 - (before.used - before.clients) as f64;
    let extra = serde_json::json!({
        "answered": answered,
        "records_popped": records,
        "answered_bytes_per_request": round(held / answered.max(1) as f64, 1),
        "used_memory_before": before.used,
        "used_memory_after": after.used,
        "clients_memory_before": before.clients,
        "clients_memory_after": after.clients,
        "result_dedup_ttl_s": dedup.as_secs(),
        "waited_s": round(waited.as_secs_f64(), 1),
        "memory_settled": settled,
        "keys_left": left,
    });
    emit_with(name, &set, &drained, &[], None, extra);
}

/// What the server's memory holds at one reading (`INFO memory`).
#[derive(Debug, Clone, Copy)]
struct Reading {
    used: u64,
    /// `mem_clients_normal`: the connections' buffers, inside `used`.
    clients: u64,
}

/// `used_memory` once the bench's own connection is the only one open
/// (a pool closes its connections when its store is dropped).
async fn quiet_memory(admin: &Admin) -> Reading {
    let started = Instant::now();
    let clients = async || admin.info_field("clients", "connected_clients").await;
    while clients().await.expect("INFO") > 1 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "bench: other connections stayed open for 30 s after their stores were dropped"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    admin
        .shed_activity()
        .await
        .expect("SLOWLOG RESET, SCRIPT FLUSH");
    let field = async |name| admin.info_field("memory", name).await.expect("INFO");
    Reading {
        used: field("used_memory").await,
        clients: field("mem_clients_normal").await,
    }
}

/// Pops every record off `list`; each of the `expected` ids must come
/// exactly once. Returns how many were popped.
async fn consume(admin: &Admin, list: &str, expected: usize) -> usize {
    let mut ids = HashSet::with_capacity(expected);
    let mut popped = 0;
    loop {
        let page = admin.pop(list, 1000).await.expect("RPOP");
        if page.is_empty() {
            break;
        }
        for record in &page {
            let value: serde_json::Value = serde_json::from_str(record).expect("a JSON record");
            let id = value["id"].as_str().expect("a record id").to_owned();
            assert!(ids.insert(id.clone()), "bench: a second record for {id}");
        }
        popped += page.len();
    }
    let missing = (0..expected).find(|seq| !ids.contains(&id_of(*seq)));
    assert!(
        missing.is_none() && popped == expected,
        "bench: {popped} records popped for {expected} requests (first missing: {missing:?})"
    );
    popped
}

/// Waits until `not_before`, then samples `used_memory` until it has gone
/// [`SETTLED`] without a new low (or [`WAIT_BOUND`] has passed): the last
/// reading and whether it settled.
async fn settle(admin: &Admin, not_before: Instant) -> (Reading, bool) {
    let give_up = not_before + WAIT_BOUND;
    let mut low = u64::MAX;
    let mut low_at = Instant::now();
    loop {
        let now = Instant::now();
        let reading = quiet_memory(admin).await;
        if reading.used < low {
            (low, low_at) = (reading.used, now);
        }
        if now >= not_before && now.duration_since(low_at) >= SETTLED {
            return (reading, true);
        }
        if now >= give_up {
            return (reading, false);
        }
        tokio::time::sleep(SAMPLE).await;
    }
}

/// Keys per prefix (up to the first `:`), as `<prefix>:*=<count>/<bytes per key>B`
/// joined by `;`, or `none`.
fn by_prefix(keys: &[(String, u64)]) -> String {
    let mut groups: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (key, bytes) in keys {
        let prefix = key.split_once(':').map_or(key.as_str(), |(p, _)| p);
        let group = groups.entry(prefix).or_default();
        group.0 += 1;
        group.1 += bytes;
    }
    if groups.is_empty() {
        return "none".to_owned();
    }
    groups
        .iter()
        .map(|(prefix, (count, bytes))| format!("{prefix}:*={count}/{}B", bytes / count))
        .collect::<Vec<_>>()
        .join(";")
}

#[cfg(test)]
mod tests {
    use super::by_prefix;

    #[test]
    fn keys_left_are_counted_by_the_prefix_before_their_first_colon() {
        let keys = [
            ("result-terminal:3:r1:t1".to_owned(), 100),
            ("result-terminal:3:r2:t2".to_owned(), 120),
            ("claim-bench:owned".to_owned(), 56),
        ];
        assert_eq!(
            by_prefix(&keys),
            "claim-bench:*=1/56B;result-terminal:*=2/110B"
        );
        assert_eq!(by_prefix(&[]), "none");
    }
}
