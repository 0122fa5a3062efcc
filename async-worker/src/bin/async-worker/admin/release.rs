//! `admin release ID [--queue Q]`: ends the lease of every claim of request ID now, whoever holds it, so it is redelivered at once.

use super::output::print_rows;
use super::{AdminError, Ctx};
use claim_core::{ClaimAdmin, ClaimInspect};
use serde::Serialize;

/// One released claim.
#[derive(Debug, Serialize)]
struct Released {
    queue: String,
    id: String,
    token: String,
    /// The owner whose claim ended.
    owner: String,
}

pub(super) async fn run(ctx: &Ctx, id: &str, queue: Option<&str>) -> Result<(), AdminError> {
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
        let Released {
            queue,
            id,
            token,
            owner,
        } = r;
        vec![queue.clone(), id.clone(), token.clone(), owner.clone()]
    })?;
    if printed {
        println!(
            "released {} claim(s): back in pending for any replica to claim",
            released.len()
        );
    }
    Ok(())
}
