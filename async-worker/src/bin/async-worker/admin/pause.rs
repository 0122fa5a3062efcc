//! `admin pause Q` / `admin resume Q`: every replica stops (restarts) claiming from Q within one poll interval; in-flight work finishes.

use super::{AdminError, Ctx};
use claim_core::ClaimAdmin;

pub(super) async fn run(ctx: &Ctx, queue: &str, paused: bool) -> Result<(), AdminError> {
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
        return super::output::json(&value);
    }
    println!("{line}");
    Ok(())
}
