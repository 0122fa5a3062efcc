//! `admin claims [--queue Q] [--owner TOKEN] [--expired]`: one row per claim, least lease left first.

use super::output::{duration, lease_left, print_rows};
use super::{AdminError, Ctx};
use async_worker::admin::stats::claim_rows;
use claim_core::ClaimStore;

pub(super) async fn run(
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
