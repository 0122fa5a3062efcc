//! The `/status` page's data: one read-only snapshot of the queues (as `admin stats` counts them: the oldest pending age too, from the source of the `oldest_pending_age_seconds` gauge), the oldest claims with each owner's pod, recent dead entries and this replica's owner token, pod and in-flight count.
//!
//! Everything comes from [`crate::admin::stats`] over `ClaimInspect`
//! reads: no payload is ever read into a row, and nothing here writes to
//! the store. The page itself is rendered by [`html`]; it and its JSON
//! twin are served by `route` (feature `serve`) on the health port.

pub mod format;
pub mod html;
#[cfg(feature = "serve")]
pub mod route;

use crate::admin::stats::{self, ClaimRow, DeadRow, QueueRef, QueueStats};
use crate::runtime::{Health, Runtime};
use claim_core::{ClaimStore, OwnerToken, StoreError};
use std::sync::Arc;
use std::time::Duration;

/// How many claims and dead entries the page lists (each table, all queues).
pub const ROWS: usize = 20;
/// How long one snapshot may take before the page reports the store unreachable.
pub const READ_BOUND: Duration = Duration::from_secs(3);
/// How often the page reloads itself, in seconds.
pub const REFRESH_SECS: u32 = 10;

/// What the page reads: the runtime's store, queues and replica state.
#[derive(Clone)]
pub struct StatusSource {
    pub store: Arc<dyn ClaimStore>,
    pub queues: Vec<QueueRef>,
    pub owner: OwnerToken,
    pub health: Health,
    /// This replica's in-flight count (claims it holds now).
    pub in_flight: Arc<dyn Fn() -> usize + Send + Sync>,
}

impl std::fmt::Debug for StatusSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatusSource")
            .field("queues", &self.queues)
            .field("owner", &self.owner)
            .finish()
    }
}

/// This replica, as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Replica {
    pub owner: String,
    /// The pod (host) named in the owner token, if it names one.
    pub pod: Option<String>,
    pub in_flight: usize,
    /// Why it is not ready, when it is not.
    pub not_ready_because: Option<String>,
}

/// One snapshot of everything the page shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub replica: Replica,
    /// The store's time of the read (Unix ms), or the store's error.
    pub store: Result<StoreView, String>,
}

/// What the store showed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoreView {
    pub at_ms: u64,
    pub queues: Vec<QueueStats>,
    /// The oldest claims (by age, else least lease left), at most [`ROWS`].
    pub claims: Vec<ClaimRow>,
    /// The most recent dead entries, at most [`ROWS`].
    pub dead: Vec<DeadRow>,
}

impl StatusSource {
    /// What the page reads of `runtime`: its store, queues (each with its
    /// configured result list, else the store's), owner token, readiness
    /// and in-flight count.
    pub fn of(runtime: &Runtime) -> StatusSource {
        let store = runtime.store().clone();
        let queues = runtime
            .config()
            .queues
            .iter()
            .map(|spec| match &spec.result_queue_name {
                Some(list) => QueueRef {
                    queue: spec.queue_name.clone(),
                    result_lists: vec![list.clone()],
                },
                None => QueueRef::from_config(store.as_ref(), &spec.queue_name),
            })
            .collect();
        let held = runtime.held().clone();
        StatusSource {
            store,
            queues,
            owner: runtime.owner().clone(),
            health: runtime.health(),
            in_flight: Arc::new(move || held.len()),
        }
    }

    /// Reads a snapshot; a store that errors or takes longer than
    /// [`READ_BOUND`] leaves the store part an error (the replica part is
    /// always there).
    pub async fn snapshot(&self) -> Snapshot {
        let replica = Replica {
            owner: self.owner.as_str().to_owned(),
            pod: self.owner.pod().map(str::to_owned),
            in_flight: (self.in_flight)(),
            not_ready_because: self.health.not_ready_because(),
        };
        let store = match tokio::time::timeout(READ_BOUND, self.read_store()).await {
            Ok(Ok(view)) => Ok(view),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("the store did not answer within {READ_BOUND:?}")),
        };
        Snapshot { replica, store }
    }

    async fn read_store(&self) -> Result<StoreView, StoreError> {
        let store = self.store.as_ref();
        let queues = stats::collect(store, &self.queues).await?;
        let now = store.now().await?;
        let mut claims = Vec::new();
        let mut dead = Vec::new();
        for q in &self.queues {
            claims.extend(stats::claim_rows(store, &q.queue, now).await?);
            dead.extend(stats::dead_rows(store, &q.queue).await?);
        }
        Ok(StoreView {
            at_ms: now.0,
            queues,
            claims: oldest_claims(claims),
            dead: recent_dead(dead),
        })
    }
}

/// The [`ROWS`] oldest claims: greatest age first (claims without an age
/// after), then least lease left.
pub fn oldest_claims(mut claims: Vec<ClaimRow>) -> Vec<ClaimRow> {
    claims.sort_by(|a, b| {
        let age = |c: &ClaimRow| std::cmp::Reverse(c.age_ms);
        (age(a), a.lease_left_ms, &a.id).cmp(&(age(b), b.lease_left_ms, &b.id))
    });
    claims.truncate(ROWS);
    claims
}

/// The [`ROWS`] most recent dead entries, newest first.
pub fn recent_dead(mut dead: Vec<DeadRow>) -> Vec<DeadRow> {
    dead.sort_by(|a, b| b.at_ms.cmp(&a.at_ms).then_with(|| a.id.cmp(&b.id)));
    dead.truncate(ROWS);
    dead
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(id: &str, age_ms: Option<u64>, lease_left_ms: i64) -> ClaimRow {
        ClaimRow {
            queue: "q".into(),
            id: id.into(),
            token: "t".into(),
            owner: "o".into(),
            pod: None,
            lease_left_ms,
            redeliveries: 0,
            age_ms,
        }
    }

    #[test]
    fn the_oldest_claims_come_first_and_claims_without_an_age_last() {
        let rows = oldest_claims(vec![
            claim("young", Some(1_000), 5),
            claim("ageless", None, 1),
            claim("old", Some(9_000), 50),
        ]);
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["old", "young", "ageless"]);
    }

    #[test]
    fn at_most_a_page_of_rows_is_kept() {
        let many = (0..ROWS + 5)
            .map(|i| claim(&i.to_string(), Some(i as u64), 0))
            .collect();
        assert_eq!(oldest_claims(many).len(), ROWS);
    }
}
