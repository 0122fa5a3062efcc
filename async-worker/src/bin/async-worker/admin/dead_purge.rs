//! `admin dead purge (ID… | --all) [--queue Q] --yes`: deletes dead entries for good, printing what it deleted.

use super::dead_list::{by_queue, chosen};
use super::output::print_rows;
use super::{AdminError, Ctx, Which};
use claim_core::ClaimAdmin;
use serde::Serialize;

/// One deleted entry.
#[derive(Debug, Serialize)]
struct Purged<'a> {
    queue: &'a str,
    id: Option<&'a str>,
    token: Option<&'a str>,
}

pub(super) async fn run(
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
    let chosen = chosen(ctx, which, queue).await?;
    let mut purged = Vec::new();
    for (q, entries, members) in by_queue(&chosen) {
        let deleted = ctx.store.purge_dead(q, &members).await?;
        for (c, _) in entries.into_iter().zip(deleted).filter(|(_, d)| *d) {
            purged.push(Purged {
                queue: &c.queue,
                id: c.id.as_deref(),
                token: c.token.as_deref(),
            });
        }
    }
    let header = ["QUEUE", "ID", "GENERATION"];
    let printed = print_rows(ctx.json, &purged, &header, |p| {
        vec![
            p.queue.to_owned(),
            p.id.unwrap_or("(unparsable)").to_owned(),
            p.token.unwrap_or("-").to_owned(),
        ]
    })?;
    if printed {
        println!("deleted {} dead entries", purged.len());
    }
    Ok(())
}
