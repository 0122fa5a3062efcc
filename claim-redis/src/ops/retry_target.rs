//! Where a parked retry entry goes, decided from its bytes and the configuration alone, as every promoter decides (`promote.rs`, `cluster::promote`, `retry_now`), and what `retry_now.lua`'s answer means.

use super::call::Call;
use crate::codec::{PromoteAs, score_arg};
use crate::state::RedisStore;
use claim_core::wire::{self, ParsedMember};
use claim_core::{Generation, RetryNow, Score};

/// Where an entry goes, decided from its bytes and the configuration
/// alone, as the promoter decides (`promote.rs`, `cluster::promote`).
pub(crate) enum Target {
    /// To `queue`'s pending set at `score` (unless the script finds it
    /// answered, or the queue key of another type).
    Promote {
        queue: String,
        score: Score,
        generation: Generation,
        parsed: Box<ParsedMember>,
    },
    /// To the dead hash with this reason.
    Bury { reason: String },
}

/// The entry's [`Target`]: its queue (`internal.request_queue_name`, else
/// the default), unless unparsable or bound for a key that is no queue.
pub(crate) fn target(store: &RedisStore, member: &[u8]) -> Target {
    let config = &store.inner.config;
    let parsed = match wire::parse_member(member) {
        Ok(parsed) => parsed,
        // The parse error may quote member bytes: only the dead entry keeps it.
        Err(e) => {
            let reason = format!("retry entry unparsable: {e}");
            return Target::Bury { reason };
        }
    };
    let queue = parsed
        .request_queue_name
        .clone()
        .unwrap_or_else(|| config.default_queue.clone());
    if let Some(reason) = config
        .retry_destination_refusal(&queue)
        .or_else(|| store.keys().queue_refusal(&queue))
    {
        return Target::Bury { reason };
    }
    Target::Promote {
        score: parsed.score(),
        generation: Generation::new(parsed.id.clone(), parsed.token.clone()),
        parsed: Box::new(parsed),
        queue,
    }
}

/// The script's answer as an outcome.
pub(crate) fn outcome(code: i64) -> RetryNow {
    match code {
        1 => RetryNow::Promoted,
        2 => RetryNow::Answered,
        3 => RetryNow::DeadLettered,
        _ => RetryNow::NotParked,
    }
}

/// The ARGV every promoter script takes for an entry going to pending:
/// the member, `p`, its score and its generation's claim key.
pub(crate) fn promote_args(call: &mut Call<'_>, member: &[u8], score: Score, g: &Generation) {
    call.arg(member)
        .arg(PromoteAs::Promote.tag())
        .arg(score_arg(score))
        .arg(g.claim_key());
}

/// The ARGV every promoter script takes for an entry going to the dead
/// hash: the member, `d`, the dead entry JSON and no claim key.
pub(crate) fn bury_args(call: &mut Call<'_>, member: &[u8], dead_entry: &str) {
    call.arg(member)
        .arg(PromoteAs::Bury.tag())
        .arg(dead_entry)
        .arg("");
}
