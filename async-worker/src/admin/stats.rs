//! What an operator sees of a queue: per-queue counts and ages, claim rows and dead rows, built from `ClaimInspect` reads and `serde::Serialize` (the admin CLI's `stats`, `claims`, `dead list`, and the `/status` page).
//!
//! Ages are measured from a request's `data.created` (Unix seconds, as the
//! Go producer stamps it): the store keeps no time of its own for when a
//! member entered pending or was claimed. A member without `created` has no
//! age. Nothing here returns a payload: rows carry ids, tokens, owners,
//! times and reasons only.

use claim_core::store::PendingEntry;
use claim_core::{ClaimStore, Member, Millis, StoreError, wire};
use serde::Serialize;

/// One queue to report on: its pending set and the result lists its
/// records go to (the queue's configured list, else the default).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueRef {
    pub queue: String,
    pub result_lists: Vec<String>,
}

impl QueueRef {
    /// The queue with the result list the store's config gives it
    /// ([`claim_core::store::StoreConfig::route`]).
    pub fn from_config(store: &dyn ClaimStore, queue: &str) -> Self {
        QueueRef {
            queue: queue.to_owned(),
            result_lists: vec![store.config().route(queue, None).list],
        }
    }
}

/// The length of one result list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListLen {
    pub list: String,
    pub len: usize,
}

/// One queue's state at one instant (`at_ms`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueStats {
    pub queue: String,
    /// The store's time the counts were read at (Unix ms).
    pub at_ms: u64,
    pub pending: usize,
    /// Live claims.
    pub claimed: usize,
    /// Claims whose lease ends within one lease TTL from now (every live
    /// claim of a healthy renewer stays under this; expired ones included).
    pub expiring_within_lease: usize,
    /// Claims whose lease has already ended, awaiting the reclaimer.
    pub expired: usize,
    /// Age of the head of pending (the next request served: earliest
    /// deadline), from its `data.created`; `None` when empty or unknown.
    pub oldest_pending_age_ms: Option<u64>,
    /// Age of the oldest claimed request, from its `data.created`.
    pub oldest_claim_age_ms: Option<u64>,
    /// Entries of the shared retry set bound for this queue.
    pub parked_retries: usize,
    pub dead: usize,
    pub result_lists: Vec<ListLen>,
    /// True while an operator has paused claiming from the queue.
    pub paused: bool,
}

/// One live claim, as `admin claims` and the status page show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClaimRow {
    pub queue: String,
    pub id: String,
    /// The request token (the generation).
    pub token: String,
    pub owner: String,
    /// The pod (host) the owner runs in, when its token names one
    /// ([`claim_core::OwnerToken::pod`]): `None` for a Go processor's or an
    /// older replica's.
    pub pod: Option<String>,
    /// Lease left, ms (negative once expired, before the reclaimer ran).
    pub lease_left_ms: i64,
    /// Earlier deliveries that ended in an expired lease.
    pub redeliveries: u32,
    /// Age from `data.created`, when the member has one.
    pub age_ms: Option<u64>,
}

/// One dead entry, as `admin dead list` and the status page show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeadRow {
    pub queue: String,
    /// `data.id`, or `None` when the member cannot be parsed.
    pub id: Option<String>,
    pub token: Option<String>,
    pub reason: String,
    /// When it was dead-lettered (Unix ms).
    pub at_ms: u64,
}

/// Milliseconds from a member's `data.created` to `now`.
pub fn member_age(member: &Member, now: Millis) -> Option<u64> {
    let created = wire::parse_member(member.as_bytes()).ok()?.created?;
    let created_ms = u64::try_from(created).ok()?.saturating_mul(1000);
    Some(now.0.saturating_sub(created_ms))
}

/// Every queue's stats, read at the store's time. The retry set is read
/// once and split by each entry's destination ([`retries_by_queue`]).
pub async fn collect(
    store: &dyn ClaimStore,
    queues: &[QueueRef],
) -> Result<Vec<QueueStats>, StoreError> {
    let now = store.now().await?;
    let retries = retries_by_queue(store).await?;
    let within = now.0.saturating_add(store.config().lease_ttl_ms);
    let mut out = Vec::with_capacity(queues.len());
    for q in queues {
        let depths = store.depths(&q.queue).await?;
        let claims = store.claims(&q.queue).await?;
        let head = store.peek(&q.queue, 0, 1).await?;
        let mut result_lists = Vec::with_capacity(q.result_lists.len());
        for list in &q.result_lists {
            let len = store.list_len(list).await?;
            result_lists.push(ListLen {
                list: list.clone(),
                len,
            });
        }
        out.push(QueueStats {
            queue: q.queue.clone(),
            at_ms: now.0,
            pending: depths.pending,
            claimed: depths.claimed,
            expiring_within_lease: claims.iter().filter(|c| c.lease_expiry.0 <= within).count(),
            expired: claims.iter().filter(|c| c.lease_expiry <= now).count(),
            oldest_pending_age_ms: head.first().and_then(|e| member_age(&e.member, now)),
            oldest_claim_age_ms: claims
                .iter()
                .filter_map(|c| member_age(&c.member, now))
                .max(),
            parked_retries: retries.iter().filter(|(to, _)| *to == q.queue).count(),
            dead: depths.dead,
            result_lists,
            paused: store.paused(&q.queue).await?,
        });
    }
    Ok(out)
}

/// The retry set's entries, earliest due first, each with the queue it
/// returns to: its `internal.request_queue_name`, else the default queue
/// (as promotion routes it).
pub async fn retries_by_queue(
    store: &dyn ClaimStore,
) -> Result<Vec<(String, PendingEntry)>, StoreError> {
    let entries = store.retry_entries().await?.into_iter().map(|entry| {
        let queue = wire::parse_member(entry.member.as_bytes())
            .ok()
            .and_then(|p| p.request_queue_name)
            .unwrap_or_else(|| store.config().default_queue.clone());
        (queue, entry)
    });
    Ok(entries.collect())
}

/// The queue's claims as rows, least lease left first.
pub async fn claim_rows(
    store: &dyn ClaimStore,
    queue: &str,
    now: Millis,
) -> Result<Vec<ClaimRow>, StoreError> {
    let mut rows: Vec<ClaimRow> = store
        .claims(queue)
        .await?
        .iter()
        .map(|claim| ClaimRow {
            queue: queue.to_owned(),
            id: claim.generation.id.clone(),
            token: claim.generation.token.clone(),
            owner: claim.owner.as_str().to_owned(),
            pod: claim.owner.pod().map(str::to_owned),
            lease_left_ms: claim.lease_expiry.0 as i64 - now.0 as i64,
            redeliveries: claim.redeliveries,
            age_ms: member_age(&claim.member, now),
        })
        .collect();
    rows.sort_by(|a, b| (a.lease_left_ms, &a.id).cmp(&(b.lease_left_ms, &b.id)));
    Ok(rows)
}

/// The queue's dead entries as rows, most recent first.
pub async fn dead_rows(store: &dyn ClaimStore, queue: &str) -> Result<Vec<DeadRow>, StoreError> {
    let mut rows: Vec<DeadRow> = store
        .dead_entries(queue)
        .await?
        .iter()
        .map(|entry| {
            let parsed = wire::parse_member(entry.member.as_bytes()).ok();
            DeadRow {
                queue: queue.to_owned(),
                id: parsed.as_ref().map(|p| p.id.clone()),
                token: parsed.map(|p| p.token),
                reason: entry.reason.clone(),
                at_ms: entry.at.0,
            }
        })
        .collect();
    rows.sort_by(|a, b| b.at_ms.cmp(&a.at_ms).then_with(|| a.id.cmp(&b.id)));
    Ok(rows)
}
