//! The hash-tagged layout's retries. `promote_due`: due entries of the shared (Go) retry set handed over to their queue's own retry set, crash-safely; then each queue's due retries promoted by `lua/promote.lua` in the queue's slot.
//!
//! Each queue parks in its own `<base>:retry` ([`crate::keys::QueueKeys`]),
//! so promotion is one atomic script in the queue's slot, as in the plain
//! layout; the marker of each entry lies in its result list's slot and is
//! read first (one call per node, per slot what a node refuses) and passed
//! as an argument.
//!
//! Hand-over, for an entry whose destination lies in another slot than
//! the set it is in (every entry of the shared set, which Go processors
//! fill, and a queue's entry that names another queue): the destination
//! queue is registered ([`crate::keys::Keys::retry_queues`]), the same
//! bytes are added to its retry set at the same due score, and only then
//! removed from the set they were in. A crash between the add and the
//! remove leaves identical bytes in both sets: the next pass adds them
//! again (a no-op while they are still parked), and a copy promoted twice
//! is the same member, which the claim script drops while its generation
//! is held and suppresses by its marker once answered: never a second
//! record, never a lost entry. An entry that cannot be promoted
//! (unparsable, or bound for a key that is no queue) goes to the default
//! queue's dead hash (as the model keeps it): in the script when it was
//! parked in the default queue's own set, else written there before it
//! leaves its set, with the same crash argument.
//!
//! `retry_now`: the entry found in whichever retry set holds it, handed
//! over to its queue's own set when it lies in another, then
//! `lua/retry_now.lua` in the queue's slot with the marker read first. Its
//! hand-over, and its burial outside the default queue's slot (the dead
//! entry written first, then the removal), are the promoter's steps with
//! the crash argument above; a marker written between its read and the
//! script is missed as the promoter misses it (the claim script then drops
//! the copy in pending as answered).

use super::call::Call;
use super::cluster::request_keys;
use super::retries::{
    Target, bury_args, move_out, promote_args, retry_sets, run_retry_now, target,
};
use crate::codec::{dead_json, score_arg};
use crate::conn::Effect;
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::{Generation, Member, Millis, Op, RetryNow, StoreError};

const PROMOTE: Op = Op::PromoteDue;
const RETRY_NOW: Op = Op::RetryNow;

/// What one due entry becomes.
enum Plan {
    /// Promoted by the script of its own set's slot.
    Here {
        member: Vec<u8>,
        score: f64,
        generation: Generation,
        /// Where its marker may be ([`request_keys::marker_candidates`]).
        markers: Vec<String>,
    },
    /// Handed over to another queue's retry set at `due`.
    Elsewhere {
        member: Vec<u8>,
        due: f64,
        queue: String,
    },
    /// To the dead hash, with this reason.
    Bury { member: Vec<u8>, reason: String },
}

pub(crate) async fn promote_due(store: &RedisStore, limit: usize) -> Result<usize, StoreError> {
    let now = store.now_ms(PROMOTE).await?;
    let due_by = score_arg(now.as_score());
    let mut moved = 0;
    let mut remaining = limit;
    // Each pass takes the earliest due entries over all retry sets, as one
    // sorted set would order them (due time, then member bytes): the
    // model's order. Entries handed over to another queue's set are read
    // again from there on a later pass and count once, when they leave.
    while remaining > 0 {
        let want = remaining.min(MAX_BATCH);
        let sets = retry_sets(store, PROMOTE).await?;
        let mut reads = redis::pipe();
        for (_, set) in &sets {
            reads
                .cmd("ZRANGEBYSCORE")
                .arg(set)
                .arg("-inf")
                .arg(&due_by)
                .arg("WITHSCORES")
                .arg("LIMIT")
                .arg(0)
                .arg(want);
        }
        let per_set: Vec<Vec<(Vec<u8>, f64)>> =
            store.conn().query(PROMOTE, Effect::Read, &reads).await?;
        let mut due: Vec<(usize, Vec<u8>, f64)> = per_set
            .into_iter()
            .enumerate()
            .flat_map(|(i, entries)| entries.into_iter().map(move |(m, d)| (i, m, d)))
            .collect();
        due.sort_by(|a, b| a.2.total_cmp(&b.2).then_with(|| a.1.cmp(&b.1)));
        let more = due.len() > want;
        due.truncate(want);
        if due.is_empty() {
            break;
        }
        let mut handed_over = 0;
        for (i, (queue, set)) in sets.iter().enumerate() {
            let plans: Vec<Plan> = due
                .iter()
                .filter(|d| d.0 == i)
                .map(|(_, member, at)| plan(store, queue.as_deref(), member, *at))
                .collect();
            if plans.is_empty() {
                continue;
            }
            let [left, over] = settle(store, queue.as_deref(), set, now, &due_by, plans).await?;
            moved += left;
            handed_over += over;
        }
        remaining -= due.len() - handed_over;
        if !more && due.len() < want && handed_over == 0 {
            break;
        }
    }
    Ok(moved)
}

/// Where `member`, due at `due` in the retry set of `home` (`None`: the
/// shared set), goes.
fn plan(store: &RedisStore, home: Option<&str>, member: &[u8], due: f64) -> Plan {
    let member = member.to_vec();
    let (queue, score, generation, parsed) = match target(store, &member) {
        Target::Bury { reason } => return Plan::Bury { member, reason },
        Target::Promote {
            queue,
            score,
            generation,
            parsed,
        } => (queue, score, generation, parsed),
    };
    if home != Some(queue.as_str()) {
        return Plan::Elsewhere { member, due, queue };
    }
    Plan::Here {
        markers: request_keys::marker_candidates(store, &queue, Some(&parsed), &generation),
        score: score.0,
        generation,
        member,
    }
}

/// Carries out one batch's plans for the set `set` of `home`; answers how
/// many entries left the retry sets for pending or the dead hash, and how
/// many were handed over to another queue's retry set. An entry buried
/// from another set than the default queue's own is written to the
/// default queue's dead hash (as the model keeps it) in that slot first.
async fn settle(
    store: &RedisStore,
    home: Option<&str>,
    set: &str,
    now: Millis,
    due_by: &str,
    plans: Vec<Plan>,
) -> Result<[usize; 2], StoreError> {
    let keys = store.keys();
    let default_queue = &store.inner.config.default_queue;
    let dead = keys.queue(default_queue).dead;
    let at_home = home == Some(default_queue.as_str());
    let mut handed_over = 0;
    let mut leaving: Vec<&[u8]> = Vec::new();
    let mut buried = 0;
    let mut here: Vec<&Plan> = Vec::new();
    // The queues first (SADD before the entries they will hold), then the
    // entries' new places, each a single-key command (pipelined, not
    // atomic), then their removal from this set: each step only after the
    // one before it landed.
    let mut queues: Vec<&str> = Vec::new();
    let mut places = redis::pipe();
    for p in &plans {
        match p {
            Plan::Elsewhere { member, due, queue } => {
                if !queues.contains(&queue.as_str()) {
                    queues.push(queue);
                }
                places
                    .zadd(keys.queue(queue).retry, member.as_slice(), *due)
                    .ignore();
                leaving.push(member);
                handed_over += 1;
            }
            Plan::Bury { member, reason } if !at_home => {
                tracing::warn!(dead = %dead, "retry entry cannot be promoted: moving it to the dead set");
                places
                    .hset(&dead, member.as_slice(), dead_json(reason, now))
                    .ignore();
                leaving.push(member);
                buried += 1;
            }
            _ => here.push(p),
        }
    }
    if !leaving.is_empty() {
        move_out(store, PROMOTE, set, &queues, &places, &leaving).await?;
    }
    if here.is_empty() {
        return Ok([buried, handed_over]);
    }
    let candidates: Vec<Vec<String>> = here
        .iter()
        .filter_map(|p| match p {
            Plan::Here { markers, .. } => Some(markers.clone()),
            _ => None,
        })
        .collect();
    let mut values = request_keys::markers(store, PROMOTE, &candidates)
        .await?
        .into_iter();
    let mut call = Call::new(store, &store.scripts().promote);
    // The script's dead hash is the home queue's, in the set's slot: only
    // the default queue's own set buries there by plan (`here` holds no
    // burial otherwise); a pending key of the wrong type found by the
    // script buries there too (the plain layout's default queue's).
    let home_dead = keys.queue(home.unwrap_or(default_queue)).dead;
    call.key(set).key(&home_dead);
    call.arg(due_by).arg(now.0).arg(keys.prefix().len());
    for p in here {
        match p {
            Plan::Here {
                member,
                score,
                generation,
                ..
            } => {
                let dest = keys.queue(home.unwrap_or(default_queue));
                let marker = values.next().flatten().unwrap_or_default();
                let marker = marker.as_str();
                call.key(dest.pending).key(dest.deliveries);
                promote_args(&mut call, member, claim_core::Score(*score), generation);
                call.arg(marker);
            }
            Plan::Bury { member, reason } => {
                tracing::warn!(dead = %dead, "retry entry cannot be promoted: moving it to the dead set");
                call.key(&dead).key(&dead);
                bury_args(&mut call, member, &dead_json(reason, now));
                call.arg("");
            }
            Plan::Elsewhere { .. } => {}
        }
    }
    let n: usize = call.run(store, PROMOTE).await?;
    Ok([buried + n, handed_over])
}

pub(crate) async fn retry_now(store: &RedisStore, member: &Member) -> Result<RetryNow, StoreError> {
    let now = store.now_ms(RETRY_NOW).await?;
    let keys = store.keys();
    let default_queue = store.inner.config.default_queue.clone();
    let sets = retry_sets(store, RETRY_NOW).await?;
    let mut reads = redis::pipe();
    for (_, set) in &sets {
        reads.zscore(set, member.as_bytes());
    }
    let scores: Vec<Option<f64>> = store.conn().query(RETRY_NOW, Effect::Read, &reads).await?;
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
                let mut call = Call::new(store, &store.scripts().retry_now);
                call.key(set).key(&dead).key(&dead).key(&dead);
                bury_args(&mut call, member.as_bytes(), &json);
                return run_retry_now(store, call, Some(""), now).await;
            }
            // Outside the dead hash's slot: the dead entry first, then the removal.
            let mut place = redis::pipe();
            place.hset(&dead, member.as_bytes(), &json).ignore();
            let leaving = [member.as_bytes()];
            move_out(store, RETRY_NOW, &first.1, &[], &place, &leaving).await?;
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
                move_out(store, RETRY_NOW, &first.1, &queues, &place, &leaving).await?;
            }
            let candidates = [request_keys::marker_candidates(
                store,
                &queue,
                Some(&parsed),
                &generation,
            )];
            let marker = request_keys::markers(store, RETRY_NOW, &candidates)
                .await?
                .into_iter()
                .next()
                .flatten()
                .unwrap_or_default();
            let mut call = Call::new(store, &store.scripts().retry_now);
            call.key(&dest.retry)
                .key(&dest.dead)
                .key(&dest.pending)
                .key(&dest.deliveries);
            promote_args(&mut call, member.as_bytes(), score, &generation);
            run_retry_now(store, call, Some(&marker), now).await
        }
    }
}
