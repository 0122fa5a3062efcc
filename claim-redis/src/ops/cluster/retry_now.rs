//! `retry_now` in the hash-tagged layout: the entry found in whichever retry set holds it, handed over to its queue's own retry set when it lies in another (as the promoter hands entries over), then `lua/retry_now.lua` in the queue's slot with the marker read first.
//!
//! The hand-over (register the queue, add the same bytes to its set at the
//! same due score, then remove them where they were) and the burial of an
//! entry outside the default queue's slot (its dead entry written first,
//! then its removal) are the promoter's steps, with its crash argument
//! (`cluster::promote`): a crash in between leaves identical bytes in two
//! places, which the next pass settles, never a lost entry or a second
//! record. A marker written between its read and the script is missed as
//! the promoter misses it: the copy in pending is then dropped as answered
//! by the claim script.

use super::promote::move_out;
use super::request_keys;
use super::retry_sets::retry_sets;
use crate::codec::dead_json;
use crate::conn::Effect;
use crate::ops::call::Call;
use crate::ops::retry_target::{Target, bury_args, outcome, promote_args, target};
use crate::state::RedisStore;
use claim_core::{Generation, Member, Millis, Op, RetryNow, Score, StoreError};

const OP: Op = Op::RetryNow;

pub(crate) async fn retry_now(store: &RedisStore, member: &Member) -> Result<RetryNow, StoreError> {
    let now = store.now_ms(OP).await?;
    let keys = store.keys();
    let default_queue = store.inner.config.default_queue.clone();
    let sets = retry_sets(store, OP).await?;
    let mut reads = redis::pipe();
    for (_, set) in &sets {
        reads.zscore(set, member.as_bytes());
    }
    let scores: Vec<Option<f64>> = store.conn().query(OP, Effect::Read, &reads).await?;
    let holding: Vec<(Option<String>, String, f64)> = sets
        .into_iter()
        .zip(scores)
        .filter_map(|((queue, set), score)| score.map(|s| (queue, set, s)))
        .collect();
    let Some(first) = holding.first().cloned() else {
        return Ok(RetryNow::NotParked);
    };
    match target(store, member.as_bytes()) {
        Target::Bury { reason } => {
            let dead = keys.queue(&default_queue).dead;
            let json = dead_json(&reason, now);
            tracing::warn!(dead = %dead, "retry entry cannot be promoted: moving it to the dead set");
            let home = holding
                .iter()
                .find(|h| h.0.as_deref() == Some(default_queue.as_str()));
            if let Some((_, set, _)) = home {
                return script(store, set, &dead, None, member, &json, now).await;
            }
            // Outside the dead hash's slot: the dead entry first, then the removal.
            let mut place = redis::pipe();
            place.hset(&dead, member.as_bytes(), &json).ignore();
            move_out(store, OP, &first.1, &[], &place, &[member.as_bytes()]).await?;
            Ok(RetryNow::DeadLettered)
        }
        Target::Promote {
            queue,
            score,
            generation,
            parsed,
        } => {
            let dest = keys.queue(&queue);
            if !holding.iter().any(|h| h.1 == dest.retry) {
                let mut place = redis::pipe();
                place.zadd(&dest.retry, member.as_bytes(), first.2).ignore();
                let (queues, leaving) = ([queue.as_str()], [member.as_bytes()]);
                move_out(store, OP, &first.1, &queues, &place, &leaving).await?;
            }
            let candidates = [request_keys::marker_candidates(
                store,
                &queue,
                Some(&parsed),
                &generation,
            )];
            let marker = request_keys::markers(store, OP, &candidates)
                .await?
                .into_iter()
                .next()
                .flatten()
                .unwrap_or_default();
            let promote = Promote {
                pending: &dest.pending,
                deliveries: &dest.deliveries,
                score,
                generation: &generation,
                marker,
            };
            script(
                store,
                &dest.retry,
                &dest.dead,
                Some(promote),
                member,
                "",
                now,
            )
            .await
        }
    }
}

/// A promotion's keys and arguments beyond the set and the dead hash.
struct Promote<'a> {
    pending: &'a str,
    deliveries: &'a str,
    score: Score,
    generation: &'a Generation,
    marker: String,
}

/// `retry_now.lua` in the slot of `set` and `dead`: a promotion, or (no
/// `promote`) the burial with the dead entry `json`.
async fn script(
    store: &RedisStore,
    set: &str,
    dead: &str,
    promote: Option<Promote<'_>>,
    member: &Member,
    json: &str,
    now: Millis,
) -> Result<RetryNow, StoreError> {
    let mut call = Call::new(store, &store.scripts().retry_now);
    call.key(set).key(dead);
    let marker = match &promote {
        Some(p) => {
            call.key(p.pending).key(p.deliveries);
            promote_args(&mut call, member.as_bytes(), p.score, p.generation);
            p.marker.as_str()
        }
        None => {
            call.key(dead).key(dead);
            bury_args(&mut call, member.as_bytes(), json);
            ""
        }
    };
    call.arg(now.0).arg(store.keys().prefix().len()).arg(marker);
    let code: i64 = call.run(store, OP).await?;
    let outcome = outcome(code);
    tracing::info!(?outcome, "parked retry promoted by an operator");
    Ok(outcome)
}
