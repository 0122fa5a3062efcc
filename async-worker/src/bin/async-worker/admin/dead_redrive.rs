//! `admin dead redrive (ID… | --all) [--queue Q]`: dead entries back to pending at their original score, delivery count reset, atomically each; prints what moved.

use super::dead_list::{by_queue, chosen};
use super::output::print_outcomes;
use super::{AdminError, Ctx, Which};
use claim_core::{ClaimAdmin, Redrive};
use serde::Serialize;

/// What happened to one entry.
#[derive(Debug, Serialize)]
struct Moved<'a> {
    queue: &'a str,
    id: Option<&'a str>,
    token: Option<&'a str>,
    outcome: Redrive,
}

pub(super) async fn run(ctx: &Ctx, which: &Which, queue: Option<&str>) -> Result<(), AdminError> {
    let chosen = chosen(ctx, which, queue).await?;
    let mut outcomes = Vec::with_capacity(chosen.len());
    for (q, entries, members) in by_queue(&chosen) {
        let answers = ctx.store.redrive_dead(q, &members).await?;
        for (c, outcome) in entries.into_iter().zip(answers) {
            outcomes.push(Moved {
                queue: &c.queue,
                id: c.id.as_deref(),
                token: c.token.as_deref(),
                outcome,
            });
        }
    }
    let cells = |m: &Moved| {
        [
            m.queue.to_owned(),
            m.id.unwrap_or("(unparsable)").to_owned(),
            m.token.unwrap_or("-").to_owned(),
            describe(m.outcome).to_owned(),
        ]
    };
    let moved = |m: &Moved| m.outcome == Redrive::Moved;
    print_outcomes(ctx.json, &outcomes, cells, moved, |n, of| {
        format!("moved {n} of {of} dead entries back to pending")
    })
}

fn describe(outcome: Redrive) -> &'static str {
    match outcome {
        Redrive::Moved => "moved to pending",
        Redrive::NotDead => "gone (redriven or purged meanwhile)",
        Redrive::Answered => "kept: already answered (resubmit it to run again, or purge)",
        Redrive::Unparsable => "kept: unparsable (purge it)",
    }
}
