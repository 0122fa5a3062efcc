//! Retries: `park_retry` runs `lua/park_retry.lua` into the queue's retry set; `promote_due` moves due retries to their queues (`lua/promote.lua`), and `retry_now` one parked retry now (`lua/retry_now.lua`); where a parked entry goes is decided here once, from its bytes and the configuration. The hash-tagged layout's promotion and retry-now are `retries_cluster`.

use super::call::Call;
use super::release::OwnerScript;
use crate::codec::{PromoteAs, dead_json, score_arg};
use crate::conn::Effect;
use crate::keys::KeyLayout;
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::store::ParkItem;
use claim_core::wire::{self, ParsedMember};
use claim_core::{Generation, Member, Millis, Op, OwnerToken, RetryNow, Score, StoreError};

/// Parks `items` into the queue's retry set, owner-checked (an answered
/// generation's claim is dropped, nothing parked). Plain layout: the
/// queue's retry set is the shared one (Go's). Hash-tagged layout: the
/// markers are read first (`OwnerScript::run`), and
/// The queue's retry set is its own, `<base>:retry`, in the queue's slot,
/// so the park stays one atomic script; the queue is first added to the
/// set of queues with retry sets of their own
/// ([`crate::keys::Keys::retry_queues`]), which promotion reads. That SADD
/// comes before the park: a crash in between leaves a name whose retry set
/// is empty (promotion finds nothing there), never a parked entry
/// promotion cannot find.
pub(crate) async fn park_retry(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    items: &[ParkItem],
) -> Result<Vec<bool>, StoreError> {
    let q = store.keys().queue(queue);
    let keys: [&str; 5] = [&q.claimed, &q.owners, &q.index, &q.deliveries, &q.retry];
    let park = OwnerScript {
        op: Op::ParkRetry,
        script: &store.scripts().park_retry,
        queue,
        keys: &keys,
        generation: |i: &ParkItem| &i.generation,
        args: |call, item| {
            call.arg(item.generation.claim_key())
                .arg(item.member.as_bytes())
                .arg(score_arg(item.due.as_score()));
        },
    };
    if store.layout() == KeyLayout::HashTagged && !items.is_empty() {
        let register = redis::Cmd::sadd(store.keys().retry_queues(), queue);
        let conn = store.conn();
        conn.query::<()>(Op::ParkRetry, Effect::Write, &register)
            .await?;
    }
    park.run(store, owner, items, |i| Some(i.member.as_bytes()))
        .await
}

/// Every retry set to inspect or drain: the shared (Go's) one first; in
/// the hash-tagged layout also `<base>:retry` of each queue in
/// [`crate::keys::Keys::retry_queues`] and of the default queue, as (queue
/// name, key); the shared set has no queue (`None`).
pub(crate) async fn retry_sets(
    store: &RedisStore,
    op: Op,
) -> Result<Vec<(Option<String>, String)>, StoreError> {
    let keys = store.keys();
    let mut sets = vec![(None, keys.retry().to_owned())];
    if store.layout() == KeyLayout::Plain {
        return Ok(sets);
    }
    let cmd = redis::Cmd::smembers(keys.retry_queues());
    let mut queues: Vec<String> = store.conn().query(op, Effect::Read, &cmd).await?;
    queues.push(store.inner.config.default_queue.clone());
    queues.sort();
    queues.dedup();
    for queue in queues {
        let retry = keys.queue(&queue).retry;
        sets.push((Some(queue), retry));
    }
    Ok(sets)
}

/// Hash-tagged layout (`retries_cluster`): moves `leaving` out of the
/// retry set `set` to the places `places` writes (single-key commands in
/// other slots, pipelined), after adding `queues` to the set of queues
/// with retry sets of their own: each step
/// only after the one before it landed, so a crash leaves an entry in
/// both places (the next promotion meets it twice and the scripts drop the
/// copy), never in none, and never in a set promotion cannot find.
pub(crate) async fn move_out(
    store: &RedisStore,
    op: Op,
    set: &str,
    queues: &[&str],
    places: &redis::Pipeline,
    leaving: &[&[u8]],
) -> Result<(), StoreError> {
    if !queues.is_empty() {
        let register = redis::Cmd::sadd(store.keys().retry_queues(), queues);
        store
            .conn()
            .query::<()>(op, Effect::Write, &register)
            .await?;
    }
    store
        .conn()
        .query::<()>(op, Effect::Transaction, places)
        .await?;
    let rem = redis::Cmd::zrem(set, leaving);
    store.conn().query::<()>(op, Effect::Write, &rem).await
}

/// Two phases, since each member names its destination queue: read the
/// due entries, parse them here, then move them in one script that
/// re-checks each is still parked and due.
pub(crate) async fn promote_due(store: &RedisStore, limit: usize) -> Result<usize, StoreError> {
    // Plain layout: the shared retry set's due entries, read and moved in
    // batches.
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
            match target(store, member) {
                Target::Promote {
                    queue,
                    score,
                    generation,
                    ..
                } => {
                    let dest = store.keys().queue(&queue);
                    call.key(dest.pending)
                        .key(store.keys().marker(&generation))
                        .key(dest.deliveries);
                    promote_args(&mut call, member, score, &generation);
                }
                Target::Bury { reason } => {
                    tracing::warn!(dead = %fallback, "retry entry cannot be promoted: moving it to the dead set");
                    call.key(&fallback).key(&fallback).key(&fallback);
                    bury_args(&mut call, member, &dead_json(&reason, now));
                }
            }
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

/// Promotes one parked retry now, by the promoter's rules
/// (`lua/retry_now.lua`).
pub(crate) async fn retry_now(store: &RedisStore, member: &Member) -> Result<RetryNow, StoreError> {
    // Plain layout: one script call on the shared retry set, the default
    // queue's dead hash and the destination queue's keys (one server).
    let now = store.now_ms(Op::RetryNow).await?;
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
            promote_args(&mut call, member.as_bytes(), score, &generation);
        }
        Target::Bury { reason } => {
            tracing::warn!(dead = %dead, "retry entry cannot be promoted: moving it to the dead set");
            call.key(&dead).key(&dead).key(&dead);
            bury_args(&mut call, member.as_bytes(), &dead_json(&reason, now));
        }
    }
    run_retry_now(store, call, None, now).await
}

/// Runs a `retry_now.lua` call whose keys and entry arguments are written:
/// the time and the prefix length follow, then (hash-tagged) the marker
/// value read first.
pub(crate) async fn run_retry_now(
    store: &RedisStore,
    mut call: Call<'_>,
    marker: Option<&str>,
    now: Millis,
) -> Result<RetryNow, StoreError> {
    call.arg(now.0).arg(store.keys().prefix().len());
    if let Some(marker) = marker {
        call.arg(marker);
    }
    let code: i64 = call.run(store, Op::RetryNow).await?;
    let outcome = outcome(code);
    tracing::info!(?outcome, "parked retry promoted by an operator");
    Ok(outcome)
}

/// Where an entry goes, decided from its bytes and the configuration
/// alone, as the promoter decides (`promote_due` in both layouts).
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
