//! `admin dead purge (ID… | --all) [--queue Q] --yes`: deletes dead entries for good, printing what it deleted.

use super::dead_list::{Chosen, chosen};
use super::output::{Table, json};
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
    let mut queues: Vec<&str> = chosen.iter().map(|c| c.queue.as_str()).collect();
    queues.dedup();
    for q in queues {
        let entries: Vec<&Chosen> = chosen.iter().filter(|c| c.queue == q).collect();
        let members: Vec<_> = entries.iter().map(|c| c.member.clone()).collect();
        let deleted = ctx.store.purge_dead(q, &members).await?;
        for (c, _) in entries.into_iter().zip(deleted).filter(|(_, d)| *d) {
            purged.push(Purged {
                queue: &c.queue,
                id: c.id.as_deref(),
                token: c.token.as_deref(),
            });
        }
    }
    if ctx.json {
        return json(&purged);
    }
    let mut t = Table::new(&["QUEUE", "ID", "GENERATION"]);
    for p in &purged {
        t.row(vec![
            p.queue.to_owned(),
            p.id.unwrap_or("(unparsable)").to_owned(),
            p.token.unwrap_or("-").to_owned(),
        ]);
    }
    t.print();
    println!("deleted {} dead entries", purged.len());
    Ok(())
}
