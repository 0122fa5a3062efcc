//! The lease state machine as a pure model: the specification every store is checked against.
//!
//! Each method is one atomic store operation and takes `now` explicitly.
//! claim-memory wraps this model in a lock; claim-redis implements the same
//! transitions in Lua and is compared with it by the conformance suite and by
//! model-based tests.

mod zset;

pub use zset::ZSet;

use crate::lease::{lease_expiry, marker_expiry};
use crate::store::{
    AckItem, AckOutcome, ClaimInfo, ClaimOutcome, ClaimRequest, DeadEntry, ParkItem, PendingEntry,
    QueueDepths, ReclaimReport, RenewOutcome, StoreConfig, Submission,
};
use crate::types::{Generation, Member, Millis, OwnerToken, Score};
use crate::wire::{self, ErrorCode, ResultRecord};
use std::collections::{BTreeMap, VecDeque};

/// How long a Go-style cancel marker lives.
const CANCEL_TTL_MS: u64 = wire::CANCEL_MARKER_TTL_SECS * 1000;

/// A live claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub member: Member,
    pub owner: OwnerToken,
    pub score: Score,
    pub lease_expiry: Millis,
    pub redeliveries: u32,
}

/// A value that disappears at `expiry` (a Redis key with a TTL).
#[derive(Debug, Clone, PartialEq)]
struct Expiring<T> {
    value: T,
    expiry: Millis,
}

/// One queue's bookkeeping.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueState {
    pub pending: ZSet,
    pub claims: BTreeMap<Generation, Claim>,
    /// Redelivery counts of generations back in pending or parked for retry.
    pub redeliveries: BTreeMap<Generation, u32>,
    pub dead: BTreeMap<Member, DeadEntry>,
}

/// The whole store: every queue, the retry set, result lists and markers.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    config: StoreConfig,
    queues: BTreeMap<String, QueueState>,
    retry: ZSet,
    /// Result lists, newest first (LPUSH); consumers take from the back.
    lists: BTreeMap<String, VecDeque<Member>>,
    markers: BTreeMap<Generation, Millis>,
    active: BTreeMap<String, Expiring<String>>,
    cancels: BTreeMap<String, Expiring<String>>,
}

impl Model {
    pub fn new(config: StoreConfig) -> Self {
        Model {
            config,
            queues: BTreeMap::new(),
            retry: ZSet::default(),
            lists: BTreeMap::new(),
            markers: BTreeMap::new(),
            active: BTreeMap::new(),
            cancels: BTreeMap::new(),
        }
    }

    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// One queue's state, if it was ever touched.
    pub fn queue(&self, queue: &str) -> Option<&QueueState> {
        self.queues.get(queue)
    }

    pub fn queue_names(&self) -> impl Iterator<Item = &str> {
        self.queues.keys().map(String::as_str)
    }

    fn q(&mut self, queue: &str) -> &mut QueueState {
        self.queues.entry(queue.to_owned()).or_default()
    }

    fn live<'a, T>(
        map: &'a BTreeMap<String, Expiring<T>>,
        key: &str,
        now: Millis,
    ) -> Option<&'a T> {
        map.get(key).filter(|e| now < e.expiry).map(|e| &e.value)
    }

    /// True when the generation has a live terminal marker.
    pub fn is_terminal(&self, generation: &Generation, now: Millis) -> bool {
        self.markers
            .get(generation)
            .is_some_and(|&expiry| now < expiry)
    }

    /// True for each generation whose cancel marker holds its token.
    pub fn cancelled(&self, generations: &[Generation], now: Millis) -> Vec<bool> {
        generations
            .iter()
            .map(|g| Self::live(&self.cancels, &g.id, now).is_some_and(|t| *t == g.token))
            .collect()
    }

    pub fn submit(&mut self, queue: &str, s: &Submission, now: Millis) {
        let id = &s.generation.id;
        self.cancels.remove(id);
        let deadline = Score(s.deadline as f64);
        self.active.insert(
            id.clone(),
            Expiring {
                value: s.generation.token.clone(),
                expiry: deadline.as_millis().max(now.plus(1000)),
            },
        );
        self.q(queue).pending.insert(s.member.clone(), deadline);
    }

    pub fn cancel(&mut self, id: &str, now: Millis) -> bool {
        let Some(token) = Self::live(&self.active, id, now).cloned() else {
            return false;
        };
        let marker = Expiring {
            value: token,
            expiry: now.plus(CANCEL_TTL_MS),
        };
        self.cancels.insert(id.to_owned(), marker);
        true
    }

    pub fn peek(&self, queue: &str, offset: usize, limit: usize) -> Vec<PendingEntry> {
        let Some(q) = self.queues.get(queue) else {
            return Vec::new();
        };
        q.pending
            .range(offset, limit)
            .map(|(score, member)| PendingEntry {
                member: member.clone(),
                score,
            })
            .collect()
    }

    pub fn claim(
        &mut self,
        queue: &str,
        owner: &OwnerToken,
        items: &[ClaimRequest],
        now: Millis,
    ) -> Vec<ClaimOutcome> {
        let ttl = self.config.lease_ttl_ms;
        items
            .iter()
            .map(|item| {
                let terminal = self.is_terminal(&item.generation, now);
                let cancelled = self.cancelled(std::slice::from_ref(&item.generation), now)[0];
                let q = self.q(queue);
                let Some(score) = q.pending.score(&item.member) else {
                    return ClaimOutcome::NotPending;
                };
                q.pending.remove(&item.member);
                if terminal || q.claims.contains_key(&item.generation) {
                    if terminal {
                        q.redeliveries.remove(&item.generation);
                    }
                    return ClaimOutcome::DuplicateDropped;
                }
                let redeliveries = q.redeliveries.remove(&item.generation).unwrap_or(0);
                let expiry = lease_expiry(now, ttl, score);
                q.claims.insert(
                    item.generation.clone(),
                    Claim {
                        member: item.member.clone(),
                        owner: owner.clone(),
                        score,
                        lease_expiry: expiry,
                        redeliveries,
                    },
                );
                ClaimOutcome::Claimed {
                    cancelled,
                    redeliveries,
                    score,
                    lease_expiry: expiry,
                }
            })
            .collect()
    }

    pub fn renew(
        &mut self,
        queue: &str,
        owner: &OwnerToken,
        generations: &[Generation],
        now: Millis,
    ) -> Vec<RenewOutcome> {
        let ttl = self.config.lease_ttl_ms;
        let q = self.q(queue);
        generations
            .iter()
            .map(|g| match q.claims.get_mut(g) {
                Some(c) if c.owner == *owner => {
                    c.lease_expiry = lease_expiry(now, ttl, c.score);
                    RenewOutcome::Renewed {
                        lease_expiry: c.lease_expiry,
                    }
                }
                _ => RenewOutcome::Lost,
            })
            .collect()
    }

    /// Pushes a terminal record unless one exists; clears the producer's keys
    /// where they still hold this generation's token. True when pushed.
    fn deliver_terminal(
        &mut self,
        g: &Generation,
        (list, record): (&str, Member),
        deadline: Score,
        now: Millis,
    ) -> bool {
        if self.is_terminal(g, now) {
            return false;
        }
        self.lists
            .entry(list.to_owned())
            .or_default()
            .push_front(record);
        let expiry = marker_expiry(now, self.config.result_dedup_ttl_ms, deadline);
        self.markers.insert(g.clone(), expiry);
        for keys in [&mut self.active, &mut self.cancels] {
            if keys.get(&g.id).is_some_and(|e| e.value == g.token) {
                keys.remove(&g.id);
            }
        }
        true
    }

    pub fn ack(
        &mut self,
        queue: &str,
        owner: &OwnerToken,
        items: &[AckItem],
        now: Millis,
    ) -> Vec<AckOutcome> {
        items
            .iter()
            .map(|item| {
                let g = &item.generation;
                let unusable = if self.is_terminal(g, now) {
                    None
                } else {
                    self.result_list_unusable(queue, &item.result_list)
                };
                let pushed = unusable.is_none()
                    && self.deliver_terminal(
                        g,
                        (&item.result_list, item.record.clone()),
                        item.score,
                        now,
                    );
                let q = self.q(queue);
                let owned = q.claims.get(g).is_some_and(|c| c.owner == *owner);
                if owned {
                    q.claims.remove(g);
                }
                // A copy of this generation the reclaimer put back while a
                // stale owner still worked on it: the generation is answered
                // (or dead-lettered) now, so the copy must never be served.
                if q.pending.remove(&item.member).is_some() {
                    q.redeliveries.remove(g);
                }
                let dead_lettered = unusable.is_some();
                if let Some(reason) = unusable {
                    let entry = DeadEntry {
                        member: item.member.clone(),
                        reason,
                        at: now,
                    };
                    q.dead.insert(item.member.clone(), entry);
                }
                AckOutcome {
                    pushed,
                    claim_dropped: owned,
                    dead_lettered,
                }
            })
            .collect()
    }

    /// Why `list` cannot take a record about a member of `queue`: its name
    /// plays another role ([`StoreConfig::result_list_refusal`]), or it is
    /// a key of another type here (another queue's non-empty pending set,
    /// which is what Redis would hold under that name).
    pub fn result_list_unusable(&self, queue: &str, list: &str) -> Option<String> {
        if let Some(reason) = self.config.result_list_refusal(queue, list) {
            return Some(reason);
        }
        let holds_zset = self.queues.get(list).is_some_and(|q| !q.pending.is_empty());
        holds_zset.then(|| unusable_list_reason(list, "zset"))
    }

    /// Removes the claim if `owner` holds it, keeping its redelivery count.
    fn take_owned(&mut self, queue: &str, owner: &OwnerToken, g: &Generation) -> Option<Claim> {
        let q = self.q(queue);
        if q.claims.get(g)?.owner != *owner {
            return None;
        }
        let claim = q.claims.remove(g)?;
        if claim.redeliveries > 0 {
            q.redeliveries.insert(g.clone(), claim.redeliveries);
        }
        Some(claim)
    }

    pub fn release(
        &mut self,
        queue: &str,
        owner: &OwnerToken,
        generations: &[Generation],
    ) -> Vec<bool> {
        generations
            .iter()
            .map(|g| match self.take_owned(queue, owner, g) {
                Some(c) => {
                    self.q(queue).pending.insert(c.member, c.score);
                    true
                }
                None => false,
            })
            .collect()
    }

    /// The shutdown sweep is a release: neither counts as a delivery.
    pub fn sweep(
        &mut self,
        queue: &str,
        owner: &OwnerToken,
        generations: &[Generation],
    ) -> Vec<bool> {
        self.release(queue, owner, generations)
    }

    pub fn park_retry(&mut self, queue: &str, owner: &OwnerToken, items: &[ParkItem]) -> Vec<bool> {
        items
            .iter()
            .map(|item| {
                let parked = self.take_owned(queue, owner, &item.generation).is_some();
                if parked {
                    self.retry.insert(item.member.clone(), item.due.as_score());
                }
                parked
            })
            .collect()
    }

    pub fn promote_due(&mut self, limit: usize, now: Millis) -> usize {
        let due: Vec<Member> = self
            .retry
            .up_to(now.as_score())
            .take(limit)
            .map(|(_, m)| m.clone())
            .collect();
        for member in &due {
            self.retry.remove(member);
            let parsed = wire::parse_member(member.as_bytes());
            let (queue, deadline) = match parsed {
                Ok(p) => {
                    let g = Generation::new(p.id, p.token);
                    let queue = p
                        .request_queue_name
                        .unwrap_or_else(|| self.config.default_queue.clone());
                    let refused = self.config.retry_destination_refusal(&queue).is_some();
                    if !refused && self.is_terminal(&g, now) {
                        // Answered while parked (a stale owner's ack): a
                        // copy back in pending would be served twice once
                        // the marker expires. Its redelivery count goes too.
                        self.q(&queue).redeliveries.remove(&g);
                        continue;
                    }
                    (queue, p.deadline)
                }
                Err(e) => {
                    self.dead_letter_retry(member, format!("retry entry unparsable: {e}"), now);
                    continue;
                }
            };
            match self.retry_destination_unusable(&queue) {
                Some(reason) => self.dead_letter_retry(member, reason, now),
                None => {
                    let pending = &mut self.q(&queue).pending;
                    pending.insert(member.clone(), Score(deadline as f64));
                }
            }
        }
        due.len()
    }

    /// Why a retry entry must not be moved to `queue`: its name plays
    /// another role, or it is a key of another type here (a result list).
    pub fn retry_destination_unusable(&self, queue: &str) -> Option<String> {
        if let Some(reason) = self.config.retry_destination_refusal(queue) {
            return Some(reason);
        }
        let holds_list = self.lists.get(queue).is_some_and(|l| !l.is_empty());
        holds_list.then(|| format!("retry entry's queue \"{queue}\" holds a list"))
    }

    /// Keeps a retry entry that cannot be promoted in the default queue's dead set.
    fn dead_letter_retry(&mut self, member: &Member, reason: String, now: Millis) {
        let queue = self.config.default_queue.clone();
        let entry = DeadEntry {
            member: member.clone(),
            reason,
            at: now,
        };
        self.q(&queue).dead.insert(member.clone(), entry);
    }

    pub fn reclaim_expired(&mut self, queue: &str, limit: usize, now: Millis) -> ReclaimReport {
        let max = self.config.max_deliveries;
        let mut expired: Vec<(Millis, Generation)> = self
            .q(queue)
            .claims
            .iter()
            .filter(|(_, c)| c.lease_expiry <= now)
            .map(|(g, c)| (c.lease_expiry, g.clone()))
            .collect();
        expired.sort();
        let mut report = ReclaimReport {
            more: expired.len() > limit,
            ..ReclaimReport::default()
        };
        for (_, g) in expired.into_iter().take(limit) {
            let terminal = self.is_terminal(&g, now);
            let q = self.q(queue);
            let claim = q.claims.remove(&g).expect("listed above");
            if terminal {
                // A stale owner's ack already answered this generation: the
                // expired claim is leftover bookkeeping, not a lost request.
                // Redelivering or dead-lettering it would misreport a
                // finished request as unfinished or poison.
                q.redeliveries.remove(&g);
                report.ghosts_repaired += 1;
                continue;
            }
            let redeliveries = claim.redeliveries + 1;
            if max > 0 && redeliveries >= max {
                let parsed = wire::parse_member(claim.member.as_bytes()).ok();
                let list = self.config.result_list_for(
                    queue,
                    parsed.as_ref().and_then(|p| p.result_queue_name.as_deref()),
                );
                // An unusable result list cannot take the record: the dead
                // entry says so, and no marker is written, so an operator's
                // redrive after fixing the key still gets its record.
                let reason = match self.result_list_unusable(queue, &list) {
                    Some(why) => undeliverable_limit_reason(redeliveries, &why),
                    None => {
                        let record = delivery_limit_record(&g.id, redeliveries, queue);
                        self.deliver_terminal(&g, (&list, record), claim.score, now);
                        delivery_limit_reason(redeliveries)
                    }
                };
                let entry = DeadEntry {
                    member: claim.member.clone(),
                    reason,
                    at: now,
                };
                self.q(queue).dead.insert(claim.member, entry);
                report.dead_lettered += 1;
            } else {
                q.redeliveries.insert(g, redeliveries);
                q.pending.insert(claim.member, claim.score);
                report.redelivered += 1;
            }
        }
        report
    }

    pub fn dead_letter(&mut self, queue: &str, member: &Member, reason: &str, now: Millis) -> bool {
        let q = self.q(queue);
        if q.pending.remove(member).is_none() {
            return false;
        }
        let entry = DeadEntry {
            member: member.clone(),
            reason: reason.to_owned(),
            at: now,
        };
        q.dead.insert(member.clone(), entry);
        true
    }

    pub fn depths(&self, queue: &str) -> QueueDepths {
        self.queues
            .get(queue)
            .map_or_else(QueueDepths::default, |q| QueueDepths {
                pending: q.pending.len(),
                claimed: q.claims.len(),
                dead: q.dead.len(),
            })
    }

    pub fn retry_depth(&self) -> usize {
        self.retry.len()
    }

    pub fn claims(&self, queue: &str) -> Vec<ClaimInfo> {
        let Some(q) = self.queues.get(queue) else {
            return Vec::new();
        };
        q.claims
            .iter()
            .map(|(g, c)| ClaimInfo {
                generation: g.clone(),
                member: c.member.clone(),
                owner: c.owner.clone(),
                score: c.score,
                lease_expiry: c.lease_expiry,
                redeliveries: c.redeliveries,
            })
            .collect()
    }

    pub fn dead_entries(&self, queue: &str) -> Vec<DeadEntry> {
        self.queues
            .get(queue)
            .map(|q| q.dead.values().cloned().collect())
            .unwrap_or_default()
    }

    pub fn retry_entries(&self) -> Vec<PendingEntry> {
        self.retry
            .iter()
            .map(|(score, member)| PendingEntry {
                member: member.clone(),
                score,
            })
            .collect()
    }

    /// A result list, oldest record first.
    pub fn results(&self, list: &str) -> Vec<Member> {
        self.lists
            .get(list)
            .map(|l| l.iter().rev().cloned().collect())
            .unwrap_or_default()
    }
}

/// Why a member sits in the dead set when its result list holds another type.
pub fn unusable_list_reason(list: &str, kind: &str) -> String {
    format!("result list \"{list}\" holds a {kind}")
}

/// Why a member sits in the dead set after too many expired leases.
pub fn delivery_limit_reason(redeliveries: u32) -> String {
    format!("delivery limit: lease expired {redeliveries} times")
}

/// Why a member at the delivery limit sits in the dead set without the
/// `DELIVERY_LIMIT` record: `why` its result list could not take it.
pub fn undeliverable_limit_reason(redeliveries: u32, why: &str) -> String {
    format!(
        "{}; the DELIVERY_LIMIT record could not be pushed: {why}",
        delivery_limit_reason(redeliveries)
    )
}

/// The `DELIVERY_LIMIT` record the reclaimer writes for a poison request.
pub fn delivery_limit_record(id: &str, redeliveries: u32, queue: &str) -> Member {
    let message =
        format!("lease expired {redeliveries} times without a result; member kept in {queue}:dead");
    ResultRecord::error(id, ErrorCode::DeliveryLimit, message)
        .to_json_bytes()
        .into()
}
