//! `admin dead list [--queue Q]`: dead entries, most recent first: request id, reason, when.

use super::output::{print_rows, utc};
use super::{AdminError, Ctx};
use async_worker::admin::stats::dead_rows;

pub(super) async fn run(ctx: &Ctx, queue: Option<&str>) -> Result<(), AdminError> {
    let mut rows = Vec::new();
    for q in ctx.queues(queue)? {
        rows.extend(dead_rows(&ctx.store, &q.queue).await?);
    }
    let header = ["QUEUE", "ID", "GENERATION", "WHEN", "REASON"];
    print_rows(ctx.json, &rows, &header, |r| {
        vec![
            r.queue.clone(),
            r.id.clone().unwrap_or_else(|| "(unparsable)".into()),
            r.token.clone().unwrap_or_else(|| "-".into()),
            utc(r.at_ms),
            r.reason.clone(),
        ]
    })?;
    Ok(())
}

/// One dead entry an operator named.
#[derive(Debug)]
pub(super) struct Chosen {
    pub queue: String,
    pub id: Option<String>,
    pub token: Option<String>,
    pub member: claim_core::Member,
}

/// `chosen` grouped by queue, in the order the queues come: each queue
/// with its entries and their members (what a dead-set call takes).
pub(super) fn by_queue(chosen: &[Chosen]) -> Vec<(&str, Vec<&Chosen>, Vec<claim_core::Member>)> {
    let mut queues: Vec<&str> = chosen.iter().map(|c| c.queue.as_str()).collect();
    queues.dedup();
    queues
        .into_iter()
        .map(|q| {
            let entries: Vec<&Chosen> = chosen.iter().filter(|c| c.queue == q).collect();
            let members = entries.iter().map(|c| c.member.clone()).collect();
            (q, entries, members)
        })
        .collect()
}

/// The dead entries `which` names (every one with `--all`), per queue.
/// An id that names no dead entry is bad input: nothing is done then.
pub(super) async fn chosen(
    ctx: &Ctx,
    which: &super::Which,
    queue: Option<&str>,
) -> Result<Vec<Chosen>, AdminError> {
    use claim_core::ClaimInspect;
    let mut out = Vec::new();
    for q in ctx.queues(queue)? {
        for entry in ctx.store.dead_entries(&q.queue).await? {
            let parsed = claim_core::wire::parse_member(entry.member.as_bytes()).ok();
            let id = parsed.as_ref().map(|p| p.id.clone());
            if which.all || id.as_ref().is_some_and(|i| which.ids.contains(i)) {
                out.push(Chosen {
                    queue: q.queue.clone(),
                    id,
                    token: parsed.map(|p| p.token),
                    member: entry.member,
                });
            }
        }
    }
    let missing: Vec<&str> = which
        .ids
        .iter()
        .filter(|i| !out.iter().any(|c| c.id.as_ref() == Some(*i)))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(AdminError::BadInput(format!(
            "no dead entry has id {}; `async-worker admin dead list` shows the dead entries",
            missing.join(", ")
        )));
    }
    Ok(out)
}
