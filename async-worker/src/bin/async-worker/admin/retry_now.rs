//! `admin retry-now ID [--queue Q]`: promotes each parked retry of request ID to its queue's pending set now, by the promoter's rules (`ClaimAdmin::retry_now`).

use super::output::print_outcomes;
use super::{AdminError, Ctx};
use claim_core::{ClaimAdmin, ClaimInspect, ClaimStore, RetryNow, wire};
use serde::Serialize;

/// One parked retry and what became of it.
#[derive(Debug, Serialize)]
struct Moved {
    /// The queue it returns to.
    queue: String,
    id: String,
    token: String,
    outcome: RetryNow,
}

pub(super) async fn run(ctx: &Ctx, id: &str, queue: Option<&str>) -> Result<(), AdminError> {
    let only = match queue {
        Some(q) => Some(ctx.queues(Some(q))?.remove(0).queue),
        None => None,
    };
    let default_queue = ctx.store.config().default_queue.clone();
    let mut chosen = Vec::new();
    for e in ctx.store.retry_entries().await? {
        let Ok(p) = wire::parse_member(e.member.as_bytes()) else {
            continue;
        };
        let bound_for = p
            .request_queue_name
            .unwrap_or_else(|| default_queue.clone());
        if p.id == id && only.as_ref().is_none_or(|o| *o == bound_for) {
            chosen.push((bound_for, p.token, e.member));
        }
    }
    if chosen.is_empty() {
        return Err(AdminError::BadInput(format!(
            "no parked retry of request {id:?}; `async-worker admin retries` lists the retry set, `inspect {id}` shows where the request is"
        )));
    }
    let mut moved = Vec::new();
    for (queue, token, member) in chosen {
        let outcome = ctx.store.retry_now(&member).await?;
        moved.push(Moved {
            queue,
            id: id.to_owned(),
            token,
            outcome,
        });
    }
    let cells = |m: &Moved| {
        let outcome = match m.outcome {
            RetryNow::Promoted => "promoted to pending",
            RetryNow::NotParked => "no longer parked (promoted meanwhile)",
            RetryNow::Answered => "already answered: dropped, not promoted",
            RetryNow::DeadLettered => "cannot be promoted: moved to the dead set",
        };
        [
            m.queue.clone(),
            m.id.clone(),
            m.token.clone(),
            outcome.into(),
        ]
    };
    let promoted = |m: &Moved| m.outcome == RetryNow::Promoted;
    print_outcomes(ctx.json, &moved, cells, promoted, |n, of| {
        format!("promoted {n} of {of} parked retries: pending now, for any replica to claim")
    })
}
