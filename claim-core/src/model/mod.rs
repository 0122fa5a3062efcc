//! The lease state machine as a pure model: the specification every store is checked against.
//!
//! Each method is one atomic store operation and takes `now` explicitly.
//! claim-memory wraps this model in a lock; claim-redis implements the same
//! transitions in Lua and is compared with it by the conformance suite and by
//! model-based tests.

mod admin;
mod returns;
mod terminal;
mod zset;

pub use returns::{
    delivery_limit_reason, delivery_limit_record, undeliverable_limit_reason, unusable_list_reason,
};
pub use zset::ZSet;

use crate::error::StoreError;
use crate::lease::member_lease_expiry;
use crate::marker::record_digest;
use crate::op::Op;
use crate::store::{
    ClaimInfo, ClaimOutcome, ClaimRequest, DeadEntry, PendingEntry, QueueDepths, RenewOutcome,
    StoreConfig, Submission,
};
use crate::stored::{Payload, Record};
use crate::types::{Generation, Holder, Member, Millis, Score};
use crate::wire;
use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// How long a Go-style cancel marker lives.
const CANCEL_TTL_MS: u64 = wire::CANCEL_MARKER_TTL_SECS * 1000;

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
    /// Live claims by generation (each also names its own generation, as inspection shows it).
    pub claims: BTreeMap<Generation, ClaimInfo>,
    /// Redelivery counts of generations back in pending or parked for retry.
    pub redeliveries: BTreeMap<Generation, u32>,
    pub dead: BTreeMap<Member, DeadEntry>,
}

impl QueueState {
    /// Keeps `member` in the dead set, with why and when.
    fn bury(&mut self, member: &Member, reason: String, at: Millis) {
        let member = member.clone();
        let entry = DeadEntry {
            member: member.clone(),
            reason,
            at,
        };
        self.dead.insert(member, entry);
    }
}

/// The whole store: every queue, the retry set, result lists and markers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Model {
    config: StoreConfig,
    queues: BTreeMap<String, QueueState>,
    retry: ZSet,
    /// Result lists, newest first (LPUSH); consumers take from the back.
    lists: BTreeMap<String, VecDeque<Record>>,
    /// Terminal markers: the digest of the record that wrote each.
    markers: BTreeMap<Generation, Expiring<String>>,
    active: BTreeMap<String, Expiring<String>>,
    cancels: BTreeMap<String, Expiring<String>>,
    /// Payloads stored apart, by key (`request-payload:<id>:<token>`).
    payloads: BTreeMap<String, Expiring<Payload>>,
    /// Enqueue counters, by key (`request-seq:<queue>:<deadline>`).
    seqs: BTreeMap<String, Expiring<i64>>,
    /// The last `EXPIRE` (seconds) set on each result list by an ack.
    list_ttls: BTreeMap<String, u64>,
    /// Queues paused by an operator (`<queue>:paused` on Redis).
    paused: BTreeSet<String>,
}

impl Model {
    pub fn new(config: StoreConfig) -> Self {
        Model {
            config,
            ..Model::default()
        }
    }

    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// One queue's state, if it was ever touched.
    pub fn queue(&self, queue: &str) -> Option<&QueueState> {
        self.queues.get(queue)
    }

    fn q(&mut self, queue: &str) -> &mut QueueState {
        self.queues.entry(queue.to_owned()).or_default()
    }

    fn live<'a, K: Ord + Borrow<Q>, Q: Ord + ?Sized, T>(
        map: &'a BTreeMap<K, Expiring<T>>,
        key: &Q,
        now: Millis,
    ) -> Option<&'a T> {
        map.get(key).filter(|e| now < e.expiry).map(|e| &e.value)
    }

    /// True when the generation has a live terminal marker.
    pub fn is_terminal(&self, generation: &Generation, now: Millis) -> bool {
        Self::live(&self.markers, generation, now).is_some()
    }

    /// True when the generation's live marker was written by `record`.
    fn marked_by(&self, generation: &Generation, record: &Record, now: Millis) -> bool {
        let digest = Self::live(&self.markers, generation, now);
        digest.is_some_and(|digest| *digest == record_digest(record.as_bytes()))
    }

    /// True for each generation whose cancel marker holds its token.
    pub fn cancelled(&self, generations: &[Generation], now: Millis) -> Vec<bool> {
        generations
            .iter()
            .map(|g| Self::live(&self.cancels, &g.id, now).is_some_and(|t| *t == g.token))
            .collect()
    }

    pub fn submit(&mut self, queue: &str, s: &Submission, now: Millis) {
        self.add_pending(queue, s, s.member.clone(), s.score(), now);
    }

    /// The Go producer's enqueue: the sequence for the queue and deadline
    /// stamped into the member, then what `submit` does at its score.
    pub fn enqueue(
        &mut self,
        queue: &str,
        s: &Submission,
        now: Millis,
    ) -> Result<Member, StoreError> {
        let template = wire::seq_template(s.member.as_bytes())
            .map_err(|e| StoreError::invalid(Op::Enqueue, e.to_string()))?;
        let key = wire::seq_key(queue, s.deadline);
        let seq = Self::live(&self.seqs, &key, now).map_or(1, |seq| seq + 1);
        let expiry = Millis(s.deadline.saturating_add(wire::SEQ_GRACE_SECS).max(0) as u64 * 1000);
        self.seqs.insert(key, Expiring { value: seq, expiry });
        let member = Member::from(template.stamp(seq));
        let score = wire::queue_score(s.deadline, Some(seq));
        self.add_pending(queue, s, member.clone(), score, now);
        Ok(member)
    }

    fn add_pending(
        &mut self,
        queue: &str,
        s: &Submission,
        member: Member,
        score: Score,
        now: Millis,
    ) {
        let id = &s.generation.id;
        self.cancels.remove(id);
        let deadline = Score(s.deadline as f64).as_millis();
        let expiry = deadline.max(now.plus(1000));
        let value = s.generation.token.clone();
        self.active.insert(id.clone(), Expiring { value, expiry });
        if let Some(payload) = &s.payload {
            let expiry = deadline.plus(wire::PAYLOAD_GRACE_MS).max(now.plus(1));
            let value = payload.clone();
            self.payloads
                .insert(s.payload_key(), Expiring { value, expiry });
        }
        self.q(queue).pending.insert(member, score);
    }

    /// The payloads stored apart at `refs`; `None` where none is live.
    pub fn fetch_payloads(&self, refs: &[String], now: Millis) -> Vec<Option<Payload>> {
        refs.iter()
            .map(|r| Self::live(&self.payloads, r, now).cloned())
            .collect()
    }

    /// The expiry (seconds) the last pushing ack set on `list`, if any.
    pub fn list_ttl(&self, list: &str) -> Option<u64> {
        self.list_ttls.get(list).copied()
    }

    pub fn cancel(&mut self, id: &str, now: Millis) -> bool {
        let Some(value) = Self::live(&self.active, id, now).cloned() else {
            return false;
        };
        let expiry = now.plus(CANCEL_TTL_MS);
        self.cancels
            .insert(id.to_owned(), Expiring { value, expiry });
        true
    }

    pub fn peek(&self, queue: &str, offset: usize, limit: usize) -> Vec<PendingEntry> {
        let Some(q) = self.queues.get(queue) else {
            return Vec::new();
        };
        entries(q.pending.range(offset, limit))
    }

    pub fn claim(
        &mut self,
        by: Holder<'_>,
        items: &[ClaimRequest],
        now: Millis,
    ) -> Vec<ClaimOutcome> {
        let ttl = self.config.lease_ttl_ms;
        items
            .iter()
            .map(|item| {
                // No claim key can be made for it: nothing is claimed, the
                // member stays where it is (the runtime dead-letters it).
                if !item.generation.is_keyable() {
                    return ClaimOutcome::NotPending;
                }
                let terminal = self.is_terminal(&item.generation, now);
                let cancelled = self.cancelled(std::slice::from_ref(&item.generation), now)[0];
                let q = self.q(by.queue);
                let Some(score) = q.pending.score(&item.member) else {
                    return ClaimOutcome::NotPending;
                };
                q.pending.remove(&item.member);
                let held = q.claims.contains_key(&item.generation);
                if terminal || held {
                    if terminal {
                        q.redeliveries.remove(&item.generation);
                    }
                    // An answered copy nobody holds (a producer repeated a
                    // submit that had landed): no ack is left to delete its
                    // payload stored apart. A holder still needs it.
                    if terminal && !held {
                        self.forget_payload(&item.member);
                    }
                    return ClaimOutcome::DuplicateDropped;
                }
                let redeliveries = q.redeliveries.remove(&item.generation).unwrap_or(0);
                let expiry = member_lease_expiry(now, ttl, &item.member);
                q.claims.insert(
                    item.generation.clone(),
                    ClaimInfo {
                        generation: item.generation.clone(),
                        member: item.member.clone(),
                        owner: by.owner.clone(),
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

    pub fn renew(&mut self, by: Holder<'_>, gens: &[Generation], now: Millis) -> Vec<RenewOutcome> {
        let ttl = self.config.lease_ttl_ms;
        let q = self.q(by.queue);
        gens.iter()
            .map(|g| match q.claims.get_mut(g) {
                Some(c) if c.owner == *by.owner => {
                    c.lease_expiry = member_lease_expiry(now, ttl, &c.member);
                    RenewOutcome::Renewed {
                        lease_expiry: c.lease_expiry,
                    }
                }
                _ => RenewOutcome::Lost,
            })
            .collect()
    }

    /// Removes the claim if `by` holds it, keeping its redelivery count.
    fn take_owned(&mut self, by: Holder<'_>, g: &Generation) -> Option<ClaimInfo> {
        let q = self.q(by.queue);
        if q.claims.get(g)?.owner != *by.owner {
            return None;
        }
        let claim = q.claims.remove(g)?;
        if claim.redeliveries > 0 {
            q.redeliveries.insert(g.clone(), claim.redeliveries);
        }
        Some(claim)
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
        self.queues
            .get(queue)
            .map(|q| q.claims.values().cloned().collect())
            .unwrap_or_default()
    }

    pub fn dead_entries(&self, queue: &str) -> Vec<DeadEntry> {
        self.queues
            .get(queue)
            .map(|q| q.dead.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Up to `limit` pending members of `queue` scored above `after`.
    pub fn peek_after(&self, queue: &str, after: Score, limit: usize) -> Vec<PendingEntry> {
        let Some(q) = self.queues.get(queue) else {
            return Vec::new();
        };
        entries(q.pending.after(after).take(limit))
    }

    pub fn retry_entries(&self) -> Vec<PendingEntry> {
        entries(self.retry.iter())
    }

    /// A result list, oldest record first.
    pub fn results(&self, list: &str) -> Vec<Record> {
        self.lists
            .get(list)
            .map(|l| l.iter().rev().cloned().collect())
            .unwrap_or_default()
    }
}

/// Sorted-set entries as the stores return them.
fn entries<'a>(scored: impl Iterator<Item = (Score, &'a Member)>) -> Vec<PendingEntry> {
    let entry = |(score, member): (Score, &Member)| PendingEntry {
        member: member.clone(),
        score,
    };
    scored.map(entry).collect()
}
