//! Rules of the design checked on every call the model answers, independently of how the model does it.
//!
//! The invariants catch lost and duplicated requests; these catch a model
//! that stays safe but breaks a promise: owner checks (DESIGN.md, "Claim
//! bookkeeping" 2), lease arithmetic, first record wins, returns to pending
//! at the original score, and a reclaimer that leaves live leases alone.

use super::calls::{Answer, Call};
use claim_core::lease::lease_expiry;
use claim_core::model::Model;
use claim_core::store::{ClaimInfo, ClaimOutcome, RenewOutcome, generations_of};
use claim_core::types::{Generation, Millis, OwnerToken};
use claim_core::wire;
use std::fmt::Debug;

fn claim_of(model: &Model, queue: &str, g: &Generation) -> Option<ClaimInfo> {
    model.claims(queue).into_iter().find(|c| c.generation == *g)
}

/// What the call broke, if anything.
pub fn check(
    before: &Model,
    after: &Model,
    call: &Call,
    answer: &Answer,
    now: Millis,
) -> Option<String> {
    let ttl = before.config().lease_ttl_ms;
    let verdict = match (call, answer) {
        (Call::Renew(batch), Answer::Renewed(out)) => {
            let (queue, owner, generations) = batch.parts();
            owned(before, after, queue, owner, generations, |g, pre| {
                let expiry = lease_expiry(now, ttl, wire::member_deadline(pre.member.as_bytes()));
                let post = claim_of(after, queue, g).map(|c| c.lease_expiry);
                (post == Some(expiry)).then_some(RenewOutcome::Renewed {
                    lease_expiry: expiry,
                })
            })
            .and_then(|owned| expect(owned, |_| RenewOutcome::Lost, out))
        }
        (Call::Ack(batch), Answer::Acked(out)) => {
            let (queue, owner, items) = batch.parts();
            let gens = generations_of(items);
            // An unanswered generation whose result list cannot take a
            // record is dead-lettered, by the claim's holder only.
            let unusable: Vec<bool> = items
                .iter()
                .map(|i| {
                    !before.is_terminal(&i.generation, now)
                        && before.result_list_unusable(queue, &i.result_list).is_some()
                })
                .collect();
            let dead: Vec<bool> = (0..items.len())
                .map(|i| {
                    unusable[i]
                        && claim_of(before, queue, &gens[i]).is_some_and(|c| c.owner == *owner)
                })
                .collect();
            // First record wins: pushed exactly where no marker existed and
            // the generation was still ours to answer (claimed or pending);
            // marked after.
            let somewhere: Vec<bool> = items
                .iter()
                .map(|i| before.ours_somewhere(queue, i))
                .collect();
            let pushed: Vec<bool> = (0..items.len())
                .map(|i| !before.is_terminal(&gens[i], now) && !unusable[i] && somewhere[i])
                .collect();
            let out: Vec<_> = out
                .iter()
                .map(|o| (o.pushed, o.claim_dropped, o.dead_lettered))
                .collect();
            let unmarked = (0..items.len())
                .find(|i| !unusable[*i] && somewhere[*i] && !after.is_terminal(&gens[*i], now));
            let marked_dead =
                (0..items.len()).find(|i| unusable[*i] && after.is_terminal(&gens[*i], now));
            match (unmarked, marked_dead) {
                (Some(i), _) => Err(format!("{} has no terminal marker after its ack", gens[i])),
                (_, Some(i)) => Err(format!(
                    "{} got a marker though its list is unusable",
                    gens[i]
                )),
                (None, None) => owned(before, after, queue, owner, &gens, |g, _| {
                    claim_of(after, queue, g).is_none().then_some(())
                })
                .map(|owned| {
                    owned
                        .into_iter()
                        .enumerate()
                        .map(|(i, o)| o.map(|()| (pushed[i], true, dead[i])))
                        .collect()
                })
                .and_then(|owned| expect(owned, |i| (pushed[i], false, dead[i]), &out)),
            }
        }
        (Call::Release(batch), Answer::Flags(out)) => {
            let (queue, owner, generations) = batch.parts();
            owned(before, after, queue, owner, generations, |g, pre| {
                let back = after
                    .queue(queue)
                    .and_then(|q| q.pending.score(&pre.member));
                // An answered generation is dropped, never returned: pending
                // holds what it held before (a producer's repeated submit of the
                // same bytes may have put a copy there, which claim drops).
                let want = if before.is_terminal(g, now) {
                    before
                        .queue(queue)
                        .and_then(|q| q.pending.score(&pre.member))
                } else {
                    Some(pre.score)
                };
                (claim_of(after, queue, g).is_none() && back == want).then_some(true)
            })
            .and_then(|owned| expect(owned, |_| false, out))
        }
        (Call::ParkRetry(batch), Answer::Flags(out)) => {
            let (queue, owner, items) = batch.parts();
            owned(
                before,
                after,
                queue,
                owner,
                &generations_of(items),
                |g, _| {
                    let item = items.iter().find(|i| i.generation == *g)?;
                    let retry = after.retry_entries();
                    let parked = retry
                        .iter()
                        .any(|e| e.member == item.member && e.score == item.due.as_score());
                    // An answered generation is dropped, never parked.
                    let want = !before.is_terminal(g, now);
                    (claim_of(after, queue, g).is_none() && parked == want).then_some(true)
                },
            )
            .and_then(|owned| expect(owned, |_| false, out))
        }
        (Call::Claim(batch), Answer::Claimed(out)) => {
            let (queue, owner, items) = batch.parts();
            items
                .iter()
                .zip(out)
                .try_for_each(|(item, outcome)| match outcome {
                    ClaimOutcome::Claimed {
                        score,
                        lease_expiry: expiry,
                        ..
                    } => {
                        let pending = before
                            .queue(queue)
                            .and_then(|q| q.pending.score(&item.member));
                        let held = claim_of(after, queue, &item.generation)
                            .is_some_and(|c| c.owner == *owner);
                        let ok = pending == Some(*score)
                            && *expiry
                                == lease_expiry(
                                    now,
                                    ttl,
                                    wire::member_deadline(item.member.as_bytes()),
                                )
                            && held;
                        ok.then_some(()).ok_or_else(|| {
                            format!(
                                "claim of {} answered {outcome:?}: wrong score, lease or holder",
                                item.generation
                            )
                        })
                    }
                    ClaimOutcome::NotPending
                    | ClaimOutcome::DuplicateDropped
                    | ClaimOutcome::DeadLettered => Ok(()),
                })
        }
        (Call::ReclaimExpired { queue, .. }, Answer::Reclaimed(_)) => {
            let live = |m: &Model| -> Vec<ClaimInfo> {
                m.claims(queue)
                    .into_iter()
                    .filter(|c| c.lease_expiry > now)
                    .collect()
            };
            (live(before) == live(after))
                .then_some(())
                .ok_or_else(|| "reclaim touched a live lease".to_owned())
        }
        _ => Ok(()),
    };
    verdict
        .err()
        .map(|why| format!("{why}\n  call:   {call:?}\n  answer: {answer:?}"))
}

/// Per item of an owner-checked batch: a claim the caller does not hold
/// must come out untouched (`None`); for one it holds, `effect` gives the
/// expected answer, or `None` when the model did not do what the design says.
fn owned<T>(
    before: &Model,
    after: &Model,
    queue: &str,
    owner: &OwnerToken,
    generations: &[Generation],
    effect: impl Fn(&Generation, &ClaimInfo) -> Option<T>,
) -> Result<Vec<Option<T>>, String> {
    generations
        .iter()
        .map(|g| match claim_of(before, queue, g) {
            Some(pre) if pre.owner == *owner => effect(g, &pre).map(Some).ok_or_else(|| {
                format!("the claim {owner} holds on {g} was not handled as the design says")
            }),
            pre => {
                let post = claim_of(after, queue, g);
                (pre == post).then_some(None).ok_or_else(|| {
                    format!(
                        "{owner} does not hold {g}, yet the claim changed: {pre:?} became {post:?}"
                    )
                })
            }
        })
        .collect()
}

/// The answers must be the owner's expected ones, and `refused(i)` elsewhere.
fn expect<T: PartialEq + Debug>(
    owned: Vec<Option<T>>,
    refused: impl Fn(usize) -> T,
    out: &[T],
) -> Result<(), String> {
    let expected: Vec<T> = owned
        .into_iter()
        .enumerate()
        .map(|(i, o)| o.unwrap_or_else(|| refused(i)))
        .collect();
    (expected == out)
        .then_some(())
        .ok_or_else(|| format!("expected the answers {expected:?}"))
}
