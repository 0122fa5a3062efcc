//! `admin retry-now ID [--queue Q]` and `admin release ID [--queue Q]`: request ID back in pending now, from the retry set (each parked retry promoted by the promoter's rules, `ClaimAdmin::retry_now`) or from a claim (its lease ended, whoever holds it, so it is redelivered at once).

use super::output::{print_outcomes, print_rows};
use super::{AdminError, Ctx};
use async_worker::admin::stats::retries_by_queue;
use claim_core::{ClaimAdmin, ClaimInspect, RetryNow, wire};
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

pub(super) async fn retry_now(ctx: &Ctx, id: &str, queue: Option<&str>) -> Result<(), AdminError> {
    ctx.queues(queue)?;
    let mut moved = Vec::new();
    for (bound_for, e) in retries_by_queue(&ctx.store).await? {
        let Ok(p) = wire::parse_member(e.member.as_bytes()) else {
            continue;
        };
        if p.id == id && queue.is_none_or(|o| o == bound_for) {
            moved.push(Moved {
                outcome: ctx.store.retry_now(&e.member).await?,
                queue: bound_for,
                id: p.id,
                token: p.token,
            });
        }
    }
    if moved.is_empty() {
        return Err(AdminError::BadInput(format!(
            "no parked retry of request {id:?}; `async-worker admin retries` lists the retry set, `inspect {id}` shows where the request is"
        )));
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

/// One released claim.
#[derive(Debug, Serialize)]
struct Released {
    queue: String,
    id: String,
    token: String,
    /// The owner whose claim ended.
    owner: String,
}

pub(super) async fn release(ctx: &Ctx, id: &str, queue: Option<&str>) -> Result<(), AdminError> {
    let mut released = Vec::new();
    for q in ctx.queues(queue)? {
        let claims = ctx.store.claims(&q.queue).await?;
        for c in claims.iter().filter(|c| c.generation.id == id) {
            if let Some(owner) = ctx.store.release_claim(&q.queue, &c.generation).await? {
                released.push(Released {
                    queue: q.queue.clone(),
                    id: c.generation.id.clone(),
                    token: c.generation.token.clone(),
                    owner: owner.as_str().to_owned(),
                });
            }
        }
    }
    if released.is_empty() {
        return Err(AdminError::BadInput(format!(
            "no claim of request {id:?} is held; `async-worker admin claims` lists the claims, `inspect {id}` shows where the request is"
        )));
    }
    let header = ["QUEUE", "ID", "GENERATION", "RELEASED FROM"];
    let printed = print_rows(ctx.json, &released, &header, |r| {
        vec![
            r.queue.clone(),
            r.id.clone(),
            r.token.clone(),
            r.owner.clone(),
        ]
    })?;
    if printed {
        println!(
            "released {} claim(s): back in pending for any replica to claim",
            released.len()
        );
    }
    Ok(())
}
