//! `promote_due`: reads the due retries, then runs `lua/promote.lua` to move them to their queues; the hash-tagged layout: `cluster::promote`.

use super::call::Call;
use super::cluster;
use super::retry_target::{bury_args, promote_args};
use crate::codec::{dead_json, score_arg};
use crate::conn::Effect;
use crate::keys::KeyLayout;
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::{Generation, Op, StoreError, wire};

/// Two phases, since each member names its destination queue: read the
/// due entries, parse them here, then move them in one script that
/// re-checks each is still parked and due.
pub(crate) async fn promote_due(store: &RedisStore, limit: usize) -> Result<usize, StoreError> {
    match store.layout() {
        KeyLayout::Plain => plain(store, limit).await,
        KeyLayout::HashTagged => cluster::promote::promote_due(store, limit).await,
    }
}

/// The shared retry set's due entries, read and moved in batches.
async fn plain(store: &RedisStore, limit: usize) -> Result<usize, StoreError> {
    let now = store.now_ms(Op::PromoteDue).await?;
    let due_by = score_arg(now.as_score());
    let default_queue = &store.inner.config.default_queue;
    let fallback = store.keys().queue(default_queue).dead;
    let mut moved = 0;
    let mut remaining = limit;
    while remaining > 0 {
        let want = remaining.min(MAX_BATCH);
        let read = redis::cmd("ZRANGEBYSCORE")
            .arg(store.keys().retry())
            .arg("-inf")
            .arg(&due_by)
            .arg("LIMIT")
            .arg(0)
            .arg(want)
            .to_owned();
        let due: Vec<Vec<u8>> = store
            .conn()
            .query(Op::PromoteDue, Effect::Read, &read)
            .await?;
        if due.is_empty() {
            break;
        }
        let mut call = Call::new(store, &store.scripts().promote);
        call.key(store.keys().retry()).key(&fallback);
        call.arg(&due_by)
            .arg(now.0)
            .arg(store.keys().prefix().len());
        for member in &due {
            let refusal = match wire::parse_member(member) {
                Ok(p) => {
                    let queue = p.request_queue_name.as_deref().unwrap_or(default_queue);
                    match store.inner.config.retry_destination_refusal(queue) {
                        None => {
                            let score = p.score();
                            let g = Generation::new(p.id, p.token);
                            let dest = store.keys().queue(queue);
                            call.key(dest.pending)
                                .key(store.keys().marker(&g))
                                .key(dest.deliveries);
                            promote_args(&mut call, member, score, &g);
                            continue;
                        }
                        Some(why) => why,
                    }
                }
                // The parse error may quote member bytes: only the dead entry keeps it.
                Err(e) => format!("retry entry unparsable: {e}"),
            };
            tracing::warn!(dead = %fallback, "retry entry cannot be promoted: moving it to the dead set");
            call.key(&fallback).key(&fallback).key(&fallback);
            bury_args(&mut call, member, &dead_json(&refusal, now));
        }
        let n: usize = call.run(store, Op::PromoteDue).await?;
        moved += n;
        remaining -= due.len();
        if due.len() < want {
            break;
        }
    }
    Ok(moved)
}
