//! `admin dead list|redrive|purge`: the dead entries, most recent first (request id, reason, when); moving named ones back to pending at their original score, delivery count reset, atomically each; or deleting them for good. Redrive and purge print what became of each entry.

use super::output::{id_cells, print_outcomes, print_rows, utc};
use super::{AdminError, Ctx, Which};
use async_worker::admin::stats::dead_rows;
use claim_core::{ClaimAdmin, ClaimInspect, Member, Redrive, wire};
use serde::Serialize;

/// `admin dead list [--queue Q]`.
pub(super) async fn list(ctx: &Ctx, queue: Option<&str>) -> Result<(), AdminError> {
    let mut rows = Vec::new();
    for q in ctx.queues(queue)? {
        rows.extend(dead_rows(&ctx.store, &q.queue).await?);
    }
    let header = ["QUEUE", "ID", "GENERATION", "WHEN", "REASON"];
    print_rows(ctx.json, &rows, &header, |r| {
        let [id, token] = id_cells(r.id.as_deref(), r.token.as_deref());
        vec![r.queue.clone(), id, token, utc(r.at_ms), r.reason.clone()]
    })?;
    Ok(())
}

/// One dead entry an operator named, and what redrive made of it.
#[derive(Debug, Serialize)]
struct Entry {
    queue: String,
    id: Option<String>,
    token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<Redrive>,
    #[serde(skip)]
    member: Member,
}

/// `admin dead redrive (ID… | --all) [--queue Q]`.
pub(super) async fn redrive(
    ctx: &Ctx,
    which: &Which,
    queue: Option<&str>,
) -> Result<(), AdminError> {
    let mut outcomes = Vec::new();
    for (q, entries) in chosen(ctx, which, queue).await? {
        let answers = ctx.store.redrive_dead(&q, &members(&entries)).await?;
        let answered = entries.into_iter().zip(answers);
        outcomes.extend(answered.map(|(e, outcome)| Entry {
            outcome: Some(outcome),
            ..e
        }));
    }
    let cells = |e: &Entry| {
        let [id, token] = id_cells(e.id.as_deref(), e.token.as_deref());
        let outcome = match e.outcome {
            Some(Redrive::Moved) => "moved to pending",
            Some(Redrive::NotDead) => "gone (redriven or purged meanwhile)",
            Some(Redrive::Answered) => {
                "kept: already answered (resubmit it to run again, or purge)"
            }
            Some(Redrive::Unparsable) | None => "kept: unparsable (purge it)",
        };
        [e.queue.clone(), id, token, outcome.to_owned()]
    };
    let moved = |e: &Entry| e.outcome == Some(Redrive::Moved);
    print_outcomes(ctx.json, &outcomes, cells, moved, |n, of| {
        format!("moved {n} of {of} dead entries back to pending")
    })
}

/// `admin dead purge (ID… | --all) [--queue Q] --yes`.
pub(super) async fn purge(
    ctx: &Ctx,
    which: &Which,
    queue: Option<&str>,
    yes: bool,
) -> Result<(), AdminError> {
    if !yes {
        return Err(AdminError::BadInput(
            "dead purge deletes entries for good: add --yes to confirm (`dead list` shows them first)"
                .into(),
        ));
    }
    let mut purged = Vec::new();
    for (q, entries) in chosen(ctx, which, queue).await? {
        let deleted = ctx.store.purge_dead(&q, &members(&entries)).await?;
        let gone = entries.into_iter().zip(deleted).filter(|(_, d)| *d);
        purged.extend(gone.map(|(e, _)| e));
    }
    let header = ["QUEUE", "ID", "GENERATION"];
    let printed = print_rows(ctx.json, &purged, &header, |e| {
        let [id, token] = id_cells(e.id.as_deref(), e.token.as_deref());
        vec![e.queue.clone(), id, token]
    })?;
    if printed {
        println!("deleted {} dead entries", purged.len());
    }
    Ok(())
}

fn members(entries: &[Entry]) -> Vec<Member> {
    entries.iter().map(|e| e.member.clone()).collect()
}

/// The dead entries `which` names (every one with `--all`), grouped by
/// queue in the order the queues come (queues with none left out). An id
/// that names no dead entry is bad input: nothing is done then.
async fn chosen(
    ctx: &Ctx,
    which: &Which,
    queue: Option<&str>,
) -> Result<Vec<(String, Vec<Entry>)>, AdminError> {
    let mut out = Vec::new();
    for q in ctx.queues(queue)? {
        let mut entries = Vec::new();
        for entry in ctx.store.dead_entries(&q.queue).await? {
            let parsed = wire::parse_member(entry.member.as_bytes()).ok();
            let id = parsed.as_ref().map(|p| p.id.clone());
            if which.all || id.as_ref().is_some_and(|i| which.ids.contains(i)) {
                entries.push(Entry {
                    queue: q.queue.clone(),
                    id,
                    token: parsed.map(|p| p.token),
                    outcome: None,
                    member: entry.member,
                });
            }
        }
        if !entries.is_empty() {
            out.push((q.queue, entries));
        }
    }
    let missing: Vec<&str> = which
        .ids
        .iter()
        .filter(|i| {
            !out.iter()
                .flat_map(|(_, e)| e)
                .any(|e| e.id.as_ref() == Some(*i))
        })
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
