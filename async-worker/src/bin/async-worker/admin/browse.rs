//! `admin pending`, `admin retries` and `admin claims`: the pending sets and the retry set, a page at a time, earliest score first, and the claims, least lease left first; payloads never printed.
//!
//! A page starts at a rank (`--offset N`) or above a score (`--after
//! SCORE`, the last score of the page before: one `ZRANGEBYSCORE`, without
//! reading the pages before it). The table ends with the flag that shows
//! the next page. The retry set is read whole (`retry_entries`) and paged
//! here: it holds only what waits for a retry.

use super::output::{duration, id_cells, lease_left, print_rows, utc};
use super::{AdminError, Ctx, Page};
use async_worker::admin::stats::{claim_rows, member_age, retries_by_queue};
use claim_core::store::PendingEntry;
use claim_core::{ClaimInspect, ClaimStore, Millis, Score, wire};
use serde::Serialize;

/// Where a page starts.
#[derive(Debug, Clone, Copy)]
pub enum From {
    /// At this rank (0: the head).
    Offset(usize),
    /// Above this score.
    After(f64),
}

/// One entry as listed: what names it and when, never its payload.
#[derive(Debug, Serialize)]
struct Row {
    /// Pending: its queue; retries: the queue it returns to.
    queue: String,
    /// `data.id`; `None` when the member cannot be parsed.
    id: Option<String>,
    /// The request token (the generation).
    token: Option<String>,
    /// The sorted-set score: the deadline (and enqueue sequence) in
    /// pending, the due time in the retry set; what `--after` takes.
    score: f64,
    /// `data.deadline`, Unix seconds.
    deadline: Option<i64>,
    /// Retries: when it is due (Unix ms, the score).
    #[serde(skip_serializing_if = "Option::is_none")]
    due_ms: Option<u64>,
    retry_count: Option<u32>,
    /// From `data.created`.
    age_ms: Option<u64>,
}

fn row(queue: String, e: &PendingEntry, now: Millis, due: bool) -> Row {
    let parsed = wire::parse_member(e.member.as_bytes()).ok();
    Row {
        queue,
        id: parsed.as_ref().map(|p| p.id.clone()),
        token: parsed.as_ref().map(|p| p.token.clone()),
        score: e.score.0,
        deadline: parsed.as_ref().map(|p| p.deadline),
        due_ms: due.then(|| e.score.as_millis().0),
        retry_count: parsed.as_ref().map(|p| p.retry_count),
        age_ms: member_age(&e.member, now),
    }
}

/// `admin pending`: a page of each queue's pending set (or `--queue`'s).
pub(super) async fn pending(ctx: &Ctx, asked: &Page) -> Result<(), AdminError> {
    let (queue, limit, from) = (asked.queue.as_deref(), asked.limit as usize, asked.from());
    let now = ctx.store.now().await?;
    let mut rows = Vec::new();
    let mut next = Vec::new();
    for q in ctx.queues(queue)? {
        // One more than the page: is there a next one, does it share a score?
        let mut page = match from {
            From::Offset(n) => ctx.store.peek(&q.queue, n, limit + 1).await?,
            From::After(s) => ctx.store.peek_after(&q.queue, Score(s), limit + 1).await?,
        };
        let more = page.len() > limit;
        let tie = more && page[limit].score == page[limit - 1].score;
        page.truncate(limit);
        if more {
            let last = page[limit - 1].score.0;
            next.push(next_page(Some(&q.queue), last, limit, from, tie));
        }
        rows.extend(page.iter().map(|e| row(q.queue.clone(), e, now, false)));
    }
    print(ctx, &rows, false, &next)
}

/// `admin retries`: a page of the retry set, or of its entries bound for `--queue`.
pub(super) async fn retries(ctx: &Ctx, asked: &Page) -> Result<(), AdminError> {
    let (queue, limit, from) = (asked.queue.as_deref(), asked.limit as usize, asked.from());
    // A queue not in the config is refused before anything is read.
    ctx.queues(queue)?;
    let now = ctx.store.now().await?;
    let entries: Vec<(String, PendingEntry)> = retries_by_queue(&ctx.store)
        .await?
        .into_iter()
        .filter(|(q, _)| queue.is_none_or(|o| o == q))
        .collect();
    let start = match from {
        From::Offset(n) => n.min(entries.len()),
        From::After(s) => entries.partition_point(|(_, e)| e.score.0 <= s),
    };
    let end = (start + limit).min(entries.len());
    let mut next = Vec::new();
    if end < entries.len() {
        let tie = entries[end].1.score == entries[end - 1].1.score;
        let last = entries[end - 1].1.score.0;
        next.push(next_page(queue, last, limit, from, tie));
    }
    let rows: Vec<Row> = entries[start..end]
        .iter()
        .map(|(q, e)| row(q.clone(), e, now, true))
        .collect();
    print(ctx, &rows, true, &next)
}

/// The next page's flags, after a page ending at score `last` (`queue`:
/// the `--queue` it repeats): by score when that skips nothing, else by rank.
fn next_page(queue: Option<&str>, last: f64, limit: usize, from: From, tie: bool) -> String {
    let queue = queue.map(|q| format!("--queue {q} ")).unwrap_or_default();
    match (from, tie) {
        (From::Offset(n), true) => format!("next page: {queue}--offset {}", n + limit),
        (From::After(_), true) => format!(
            "next page: {queue}--after {last} skips entries sharing that score; page with --offset instead"
        ),
        _ => format!("next page: {queue}--after {last}"),
    }
}

fn print(ctx: &Ctx, rows: &[Row], retries: bool, next: &[String]) -> Result<(), AdminError> {
    let mut header = vec![
        "QUEUE",
        "ID",
        "GENERATION",
        "SCORE",
        "DEADLINE",
        "RETRIES",
        "AGE",
    ];
    if retries {
        header.insert(3, "DUE");
    }
    let printed = print_rows(ctx.json, rows, &header, |r| {
        let [id, token] = id_cells(r.id.as_deref(), r.token.as_deref());
        let mut cells = vec![r.queue.clone(), id, token];
        if let Some(due) = r.due_ms {
            cells.push(utc(due));
        }
        cells.extend([
            r.score.to_string(),
            r.deadline
                .and_then(|d| u64::try_from(d).ok())
                .map_or_else(|| "-".into(), |d| utc(d.saturating_mul(1000))),
            r.retry_count.map_or_else(|| "-".into(), |n| n.to_string()),
            duration(r.age_ms),
        ]);
        cells
    })?;
    if printed {
        for line in next {
            println!("{line}");
        }
    }
    Ok(())
}

/// `admin claims [--queue Q] [--owner TOKEN] [--expired]`: one row per claim, least lease left first.
pub(super) async fn claims(
    ctx: &Ctx,
    queue: Option<&str>,
    owner: Option<&str>,
    expired: bool,
) -> Result<(), AdminError> {
    let now = ctx.store.now().await?;
    let mut rows = Vec::new();
    for q in ctx.queues(queue)? {
        rows.extend(claim_rows(&ctx.store, &q.queue, now).await?);
    }
    rows.retain(|r| owner.is_none_or(|o| r.owner == o) && (!expired || r.lease_left_ms <= 0));
    let header = [
        "QUEUE",
        "ID",
        "GENERATION",
        "OWNER",
        "LEASE LEFT",
        "DELIVERIES",
        "AGE",
    ];
    print_rows(ctx.json, &rows, &header, |r| {
        vec![
            r.queue.clone(),
            r.id.clone(),
            r.token.clone(),
            r.owner.clone(),
            lease_left(r.lease_left_ms),
            // This delivery and the earlier ones whose lease expired.
            (r.redeliveries + 1).to_string(),
            duration(r.age_ms),
        ]
    })?;
    Ok(())
}
