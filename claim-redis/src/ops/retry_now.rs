//! `retry_now`: runs `lua/retry_now.lua` on one parked retry, promoting it now by the promoter's rules; the hash-tagged layout: `cluster::retry_now`.

use super::call::Call;
use super::cluster;
use crate::codec::{PromoteAs, dead_json, score_arg};
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::wire::{self, ParsedMember};
use claim_core::{Generation, Member, Op, RetryNow, Score, StoreError};

const OP: Op = Op::RetryNow;

pub(crate) async fn retry_now(store: &RedisStore, member: &Member) -> Result<RetryNow, StoreError> {
    match store.layout() {
        KeyLayout::Plain => plain(store, member).await,
        KeyLayout::HashTagged => cluster::retry_now::retry_now(store, member).await,
    }
}

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

/// One script call on the shared retry set, the default queue's dead
/// hash and the destination queue's keys (all on the one server).
async fn plain(store: &RedisStore, member: &Member) -> Result<RetryNow, StoreError> {
    let now = store.now_ms(OP).await?;
    let keys = store.keys();
    let dead = keys.queue(&store.inner.config.default_queue).dead;
    let mut call = Call::new(store, &store.scripts().retry_now);
    call.key(keys.retry()).key(&dead);
    match target(store, member.as_bytes()) {
        Target::Promote {
            queue,
            score,
            generation,
            ..
        } => {
            let dest = keys.queue(&queue);
            call.key(dest.pending)
                .key(dest.deliveries)
                .key(keys.marker(&generation));
            call.arg(member.as_bytes())
                .arg(PromoteAs::Promote.tag())
                .arg(score_arg(score))
                .arg(generation.claim_key());
        }
        Target::Bury { reason } => {
            tracing::warn!(dead = %dead, "retry entry cannot be promoted: moving it to the dead set");
            call.key(&dead).key(&dead).key(&dead);
            call.arg(member.as_bytes())
                .arg(PromoteAs::Bury.tag())
                .arg(dead_json(&reason, now))
                .arg("");
        }
    }
    call.arg(now.0).arg(keys.prefix().len());
    let code: i64 = call.run(store, OP).await?;
    let outcome = outcome(code);
    tracing::info!(?outcome, "parked retry promoted by an operator");
    Ok(outcome)
}
