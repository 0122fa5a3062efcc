//! `admin stats [--queue Q] [--watch DURATION]`: per-queue counts and ages, once or every DURATION; and `admin pause Q` / `admin resume Q`, which every replica follows within one poll interval (in-flight work finishes).

use super::output::{Table, duration, json};
use super::{AdminError, Ctx};
use async_worker::admin::stats::{QueueStats, collect};
use claim_core::ClaimAdmin;
use std::time::Duration;

pub(super) async fn run(
    ctx: &Ctx,
    queue: Option<&str>,
    watch: Option<Duration>,
) -> Result<(), AdminError> {
    let queues = ctx.queues(queue)?;
    // One listener for the whole watch: a SIGINT that lands while the
    // stats are read (a fresh `ctrl_c()` per sleep would miss it, and the
    // handler, once installed, keeps the signal from ending the process).
    let mut interrupted = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        let stats = tokio::select! {
            stats = collect(&ctx.store, &queues) => stats?,
            _ = &mut interrupted, if watch.is_some() => return Ok(()),
        };
        match (ctx.json, watch) {
            // One document per line while watching.
            (true, Some(_)) => println!(
                "{}",
                serde_json::to_string(&stats).map_err(|e| AdminError::BadInput(e.to_string()))?
            ),
            (true, None) => json(&stats)?,
            (false, _) => table(&stats).print(),
        }
        let Some(every) = watch else {
            return Ok(());
        };
        tokio::select! {
            () = tokio::time::sleep(every) => println!(),
            _ = &mut interrupted => return Ok(()),
        }
    }
}

/// `admin pause Q` (`paused`) or `admin resume Q`.
pub(super) async fn pause(ctx: &Ctx, queue: &str, paused: bool) -> Result<(), AdminError> {
    ctx.queues(Some(queue))?;
    let changed = ctx.store.set_paused(queue, paused).await?;
    let poll = crate::settings::format_duration(ctx.settings.runtime.poll_interval);
    let line = match (paused, changed) {
        (true, true) => format!(
            "paused {queue}: every replica stops claiming from it within one poll interval ({poll}); in-flight work finishes"
        ),
        (true, false) => format!("{queue} was already paused"),
        (false, true) => format!(
            "resumed {queue}: every replica claims from it again within one poll interval ({poll})"
        ),
        (false, false) => format!("{queue} was not paused"),
    };
    if ctx.json {
        let value = serde_json::json!({"queue": queue, "paused": paused, "changed": changed});
        return json(&value);
    }
    println!("{line}");
    Ok(())
}

fn table(stats: &[QueueStats]) -> Table {
    let mut t = Table::new(&[
        "QUEUE",
        "PENDING",
        "CLAIMED",
        "EXPIRING",
        "EXPIRED",
        "OLDEST PENDING",
        "OLDEST CLAIM",
        "RETRIES",
        "DEAD",
        "RESULT LISTS",
        "PAUSED",
    ]);
    for s in stats {
        let lists: Vec<String> = s
            .result_lists
            .iter()
            .map(|l| format!("{}={}", l.list, l.len))
            .collect();
        t.row(vec![
            s.queue.clone(),
            s.pending.to_string(),
            s.claimed.to_string(),
            s.expiring_within_lease.to_string(),
            s.expired.to_string(),
            duration(s.oldest_pending_age_ms),
            duration(s.oldest_claim_age_ms),
            s.parked_retries.to_string(),
            s.dead.to_string(),
            lists.join(","),
            if s.paused { "yes" } else { "no" }.into(),
        ]);
    }
    t
}
