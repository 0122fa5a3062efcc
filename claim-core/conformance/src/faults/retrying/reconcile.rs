//! Retrying's layer: idempotent calls retried, the others reconciled from what the store shows before a call and after its indeterminate failure.

use super::{Attempt, Retrying};
use async_trait::async_trait;
use claim_core::ClaimStore;
use claim_core::Result;
use claim_core::layer::{Forward, StoreFuture, StoreLayer};
use claim_core::op::Op;
use claim_core::store::{
    AckItem, AckOutcome, ClaimInfo, ClaimOutcome, ClaimRequest, ParkItem, ReclaimReport,
    Submission, generations_of,
};
use claim_core::types::{Generation, Holder, Member};
use claim_core::{ClaimProducer, ListReads, Record};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;

/// Enough to read a whole test queue in one peek.
const ALL: usize = 1_000_000;

impl<S: ClaimStore + ClaimProducer + ListReads> Retrying<S> {
    async fn pending_members(&self, queue: &str) -> Result<BTreeSet<Member>> {
        let entries = self.again(|| self.inner.peek(queue, 0, ALL)).await?;
        Ok(entries.into_iter().map(|e| e.member).collect())
    }

    async fn dead_members(&self, queue: &str) -> Result<BTreeSet<Member>> {
        let dead = self.again(|| self.inner.dead_entries(queue)).await?;
        Ok(dead.into_iter().map(|d| d.member).collect())
    }

    async fn claim_map(&self, queue: &str) -> Result<BTreeMap<Generation, ClaimInfo>> {
        let claims = self.again(|| self.inner.claims(queue)).await?;
        Ok(claims
            .into_iter()
            .map(|c| (c.generation.clone(), c))
            .collect())
    }

    /// For each generation, whether `holder` holds its claim.
    async fn owned(&self, by: Holder<'_>, generations: &[Generation]) -> Result<Vec<bool>> {
        let claims = self.claim_map(by.queue).await?;
        Ok(generations
            .iter()
            .map(|g| claims.get(g).is_some_and(|c| c.owner == *by.owner))
            .collect())
    }

    async fn terminal(&self, generations: &[Generation]) -> Result<Vec<bool>> {
        let mut out = Vec::with_capacity(generations.len());
        for g in generations {
            out.push(self.again(|| self.inner.is_terminal(g)).await?);
        }
        Ok(out)
    }

    /// An owner-checked return (release, park): it took effect if a
    /// claim the owner held before is gone; each item then answers whether
    /// the owner held it (a generation repeated in the batch: its first time).
    async fn owner_checked<F, Fut>(
        &self,
        by: Holder<'_>,
        generations: &[Generation],
        call: F,
    ) -> Result<Vec<bool>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Vec<bool>>>,
    {
        let before = self.owned(by, generations).await?;
        self.reconciled(call, || async {
            let after = self.owned(by, generations).await?;
            let changed = before.iter().zip(&after).any(|(b, a)| *b && !*a);
            Ok(Attempt::done_if(changed, || {
                first_times(generations, &before)
            }))
        })
        .await
    }
}

/// Idempotent calls (reads, submit, cancel, renew) forward through
/// [`Retrying::again`]; the calls whose answer says what they changed are
/// overridden with their reconciliation.
#[async_trait]
impl<S: ClaimStore + ClaimProducer + ListReads> StoreLayer for Retrying<S> {
    type Inner = S;

    fn inner(&self) -> &S {
        &self.inner
    }

    fn around<'a, T: Send + 'a>(&'a self, op: Op, call: &'a Forward<'a, T>) -> StoreFuture<'a, T> {
        debug_assert!(!reconciled(op), "{op} is reconciled, not retried");
        Box::pin(self.again(call))
    }

    /// Took effect if a member that was pending is gone. Then each item is
    /// `Claimed` if its owner holds it now, `NotPending` if it was not
    /// pending (or another owner took it), else `DuplicateDropped`.
    async fn claim(&self, by: Holder<'_>, items: &[ClaimRequest]) -> Result<Vec<ClaimOutcome>> {
        let Holder { queue, owner } = by;
        let pending = self.pending_members(queue).await?;
        let claimed = self.claim_map(queue).await?;
        let call = || self.inner.claim(by, items);
        self.reconciled(call, || async {
            let still = self.pending_members(queue).await?;
            if !items
                .iter()
                .any(|i| pending.contains(&i.member) && !still.contains(&i.member))
            {
                return Ok(Attempt::Again);
            }
            let now_claimed = self.claim_map(queue).await?;
            let mut seen = BTreeSet::new();
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let first = seen.insert(&item.member);
                let holder = now_claimed.get(&item.generation);
                out.push(match holder {
                    _ if !first || !pending.contains(&item.member) => ClaimOutcome::NotPending,
                    _ if claimed.contains_key(&item.generation) => ClaimOutcome::DuplicateDropped,
                    Some(c) if c.owner == *owner && c.member == item.member => {
                        let g = std::slice::from_ref(&item.generation);
                        let cancelled = self.again(|| self.inner.cancelled(g)).await?;
                        ClaimOutcome::Claimed {
                            cancelled: cancelled.first().copied().unwrap_or(false),
                            redeliveries: c.redeliveries,
                            score: c.score,
                            lease_expiry: c.lease_expiry,
                        }
                    }
                    Some(c) if c.member == item.member => ClaimOutcome::NotPending,
                    _ => ClaimOutcome::DuplicateDropped,
                });
            }
            Ok(Attempt::Done(out))
        })
        .await
    }

    /// Idempotent in effect; its answer is rebuilt from the state before
    /// once a marker or a dropped claim shows it took effect.
    async fn ack(&self, by: Holder<'_>, items: &[AckItem]) -> Result<Vec<AckOutcome>> {
        let gens = generations_of(items);
        let members: Vec<Member> = items.iter().map(|i| i.member.clone()).collect();
        let terminal = self.terminal(&gens).await?;
        let owned = self.owned(by, &gens).await?;
        let dead = self.dead_members(by.queue).await?;
        let call = || self.inner.ack(by, items);
        self.reconciled(call, || async {
            let terminal_after = self.terminal(&gens).await?;
            let owned_after = self.owned(by, &gens).await?;
            let dead_after = self.dead_members(by.queue).await?;
            let marked: Vec<bool> = terminal
                .iter()
                .zip(&terminal_after)
                .map(|(b, a)| !*b && *a)
                .collect();
            // Dead-lettered by this ack: the member is in the dead set now,
            // and either was not before, or (the same bytes were dead
            // already) the claim the caller held is gone with no marker
            // written, which only a dead-lettering ack does.
            let buried: Vec<bool> = (0..items.len())
                .map(|i| {
                    let m = &members[i];
                    let held_and_gone = owned[i] && !owned_after[i];
                    dead_after.contains(m)
                        && (!dead.contains(m)
                            || (held_and_gone && !terminal[i] && !terminal_after[i]))
                })
                .collect();
            let dropped = owned.iter().zip(&owned_after).any(|(b, a)| *b && !*a);
            if !marked.contains(&true) && !buried.contains(&true) && !dropped {
                return Ok(Attempt::Again);
            }
            let pushed = first_times(&gens, &marked);
            let buried = first_times(&members, &buried);
            let dropped = first_times(&gens, &owned);
            // A record found in its list under a marker that this call did
            // not write: an earlier attempt (or item) with these bytes landed.
            let mut lists: BTreeMap<&str, Vec<Record>> = BTreeMap::new();
            for item in items {
                if !lists.contains_key(item.result_list.as_str()) {
                    let list = &item.result_list;
                    // A list of another type holds no records.
                    let records = match self.again(|| self.inner.results(list)).await {
                        Err(e) if !e.is_transient() => Vec::new(),
                        other => other?,
                    };
                    lists.insert(list, records);
                }
            }
            Ok(Attempt::Done(
                (0..items.len())
                    .map(|i| AckOutcome {
                        pushed: pushed[i],
                        claim_dropped: dropped[i],
                        dead_lettered: buried[i],
                        own_record_landed: !pushed[i]
                            && terminal_after[i]
                            && lists[items[i].result_list.as_str()].contains(&items[i].record),
                    })
                    .collect(),
            ))
        })
        .await
    }

    /// An enqueue took effect when a member of its generation that was not
    /// pending before is pending now: that member is the answer (a retry
    /// would stamp a second sequence and enqueue a second copy). Exact
    /// unless the very bytes were pending already (the same generation
    /// enqueued again after its counter restarted): then it retries.
    async fn enqueue(&self, queue: &str, submission: &Submission) -> Result<Member> {
        let before = self.pending_members(queue).await?;
        let call = || self.inner.enqueue(queue, submission);
        self.reconciled(call, || async {
            let after = self.pending_members(queue).await?;
            let landed = after.difference(&before).find(|m| {
                claim_core::wire::parse_member(m.as_bytes()).is_ok_and(|p| {
                    p.id == submission.generation.id && p.token == submission.generation.token
                })
            });
            Ok(match landed {
                Some(m) => Attempt::Done(m.clone()),
                None => Attempt::Again,
            })
        })
        .await
    }

    /// Took effect if the retry set shrank; the answer is by how much.
    async fn promote_due(&self, limit: usize) -> Result<usize> {
        let before = self.again(|| self.inner.retry_depth()).await?;
        let call = || self.inner.promote_due(limit);
        self.reconciled(call, || async {
            let after = self.again(|| self.inner.retry_depth()).await?;
            Ok(Attempt::done_if(after < before, || before - after))
        })
        .await
    }

    /// Took effect if an expired claim is gone. Each one gone was a ghost if
    /// it was terminal before, dead-lettered if it became terminal, and
    /// redelivered otherwise; more remain if an expired claim is left.
    async fn reclaim_expired(&self, queue: &str, limit: usize) -> Result<ReclaimReport> {
        let now = self.again(|| self.inner.now()).await?;
        let claims_before = self.claim_map(queue).await?;
        let expired: Vec<Generation> = claims_before
            .values()
            .filter(|c| c.lease_expiry <= now)
            .map(|c| c.generation.clone())
            .collect();
        let terminal = self.terminal(&expired).await?;
        let dead = self.dead_members(queue).await?;
        let call = || self.inner.reclaim_expired(queue, limit);
        self.reconciled(call, || async {
            let after = self.claim_map(queue).await?;
            let gone: Vec<(usize, &Generation)> = expired
                .iter()
                .enumerate()
                .filter(|(_, g)| !after.contains_key(*g))
                .collect();
            if gone.is_empty() {
                return Ok(Attempt::Again);
            }
            let mut report = ReclaimReport {
                more: after.values().any(|c| c.lease_expiry <= now),
                ..ReclaimReport::default()
            };
            let dead_after = self.dead_members(queue).await?;
            let pending_after = self.pending_members(queue).await?;
            let claims_before = &claims_before;
            for (i, g) in gone {
                let member = &claims_before[g].member;
                // Dead-lettered: in the dead set now and either new there or
                // (the same bytes were dead already) not back in pending.
                let buried = dead_after.contains(member)
                    && (!dead.contains(member) || !pending_after.contains(member));
                if terminal[i] {
                    report.ghosts_repaired += 1;
                } else if buried {
                    report.dead_lettered += 1;
                } else {
                    report.redelivered += 1;
                }
            }
            Ok(Attempt::Done(report))
        })
        .await
    }

    async fn dead_letter(&self, queue: &str, member: &Member, reason: &str) -> Result<bool> {
        let was_pending = self.pending_members(queue).await?.contains(member);
        let call = || self.inner.dead_letter(queue, member, reason);
        self.reconciled(call, || async {
            let pending = self.pending_members(queue).await?.contains(member);
            Ok(Attempt::done_if(was_pending && !pending, || true))
        })
        .await
    }

    async fn release(&self, by: Holder<'_>, generations: &[Generation]) -> Result<Vec<bool>> {
        let call = || self.inner.release(by, generations);
        self.owner_checked(by, generations, call).await
    }

    async fn park_retry(&self, by: Holder<'_>, items: &[ParkItem]) -> Result<Vec<bool>> {
        let call = || self.inner.park_retry(by, items);
        self.owner_checked(by, &generations_of(items), call).await
    }
}

/// True for the operations [`Retrying`] overrides with a reconciliation:
/// every change but the idempotent ones.
fn reconciled(op: Op) -> bool {
    op.mutates() && !matches!(op, Op::Submit | Op::Cancel | Op::Renew)
}

/// `flags`, false where an item repeats an earlier one of the batch.
fn first_times<T: Ord>(items: &[T], flags: &[bool]) -> Vec<bool> {
    let mut seen = BTreeSet::new();
    items
        .iter()
        .zip(flags)
        .map(|(item, flag)| seen.insert(item) && *flag)
        .collect()
}
