//! The model's returns to pending and to the dead set: release (the shutdown sweep is one), retry parking, promotion of due retries, reclaim of expired claims, dead-lettering.

use super::Model;
use crate::admin::RetryNow;
use crate::lease::marker_expiry;
use crate::store::{ParkItem, ReclaimReport};
use crate::stored::Record;
use crate::types::{Generation, Holder, Member, Millis};
use crate::wire::{self, ErrorCode, ResultRecord};

impl Model {
    /// Returns the claims `owner` holds to pending at their original score
    /// (not a delivery: the shutdown sweep is a release too); true where a
    /// claim of the caller's ended. A claim whose generation
    /// is answered (a live marker: a stale owner's ack landed while this
    /// one held it) is dropped instead, with its redelivery count and its
    /// payload key: back in pending it would be served again once the
    /// marker expired, and the stale ack left the payload to this holder.
    pub fn release(&mut self, by: Holder<'_>, gens: &[Generation], now: Millis) -> Vec<bool> {
        gens.iter()
            .map(|g| match self.take_owned(by, g) {
                Some(c) => {
                    if !self.drop_if_answered(by.queue, g, now) {
                        self.q(by.queue).pending.insert(c.member, c.score);
                    }
                    true
                }
                None => false,
            })
            .collect()
    }

    /// Parks the claims `owner` holds in the retry set; true where a claim
    /// of the caller's ended. An answered generation's claim is dropped,
    /// nothing parked (as [`Self::release`]).
    pub fn park_retry(&mut self, by: Holder<'_>, items: &[ParkItem], now: Millis) -> Vec<bool> {
        items
            .iter()
            .map(|item| {
                let g = &item.generation;
                let ended = self.take_owned(by, g).is_some();
                if ended && !self.drop_if_answered(by.queue, g, now) {
                    self.retry.insert(item.member.clone(), item.due.as_score());
                }
                ended
            })
            .collect()
    }

    /// After a claim of `g` ended: if `g` is answered, forgets its
    /// redelivery count and its payload key, and says so (the caller then
    /// returns it nowhere). A stale owner's ack leaves the payload to the
    /// claim's holder ([`Self::ack`]); this is the holder ending its claim
    /// without an ack, so nobody else would delete it. The key is the
    /// generation's own (`request-payload:<id>:<token>`, the only one a
    /// member may name), deleted whether or not the member named it.
    fn drop_if_answered(&mut self, queue: &str, g: &Generation, now: Millis) -> bool {
        let answered = self.is_terminal(g, now);
        if answered {
            self.q(queue).redeliveries.remove(g);
            self.payloads.remove(&wire::payload_key(&g.id, &g.token));
        }
        answered
    }

    pub fn promote_due(&mut self, limit: usize, now: Millis) -> usize {
        let due: Vec<Member> = self
            .retry
            .up_to(now.as_score())
            .take(limit)
            .map(|(_, m)| m.clone())
            .collect();
        for member in &due {
            self.promote_entry(member, now);
        }
        due.len()
    }

    /// Promotes one parked retry now, whatever its due time, by the
    /// promoter's rules ([`Self::promote_due`]).
    pub fn retry_now(&mut self, member: &Member, now: Millis) -> RetryNow {
        if self.retry.score(member).is_none() {
            return RetryNow::NotParked;
        }
        self.promote_entry(member, now)
    }

    /// Moves one retry entry out of the retry set: to its queue's pending
    /// set, nowhere (answered), or the default queue's dead set.
    fn promote_entry(&mut self, member: &Member, now: Millis) -> RetryNow {
        self.retry.remove(member);
        let p = match wire::parse_member(member.as_bytes()) {
            Ok(p) => p,
            Err(e) => {
                self.dead_letter_retry(member, format!("retry entry unparsable: {e}"), now);
                return RetryNow::DeadLettered;
            }
        };
        // Go's formula, as Go's mover and producer score it.
        let score = p.score();
        let g = Generation::new(p.id, p.token);
        let queue = p
            .request_queue_name
            .unwrap_or_else(|| self.config.default_queue.clone());
        let refused = self.config.retry_destination_refusal(&queue).is_some();
        if !refused && self.is_terminal(&g, now) {
            // Answered while parked (a stale owner's ack): a copy back in
            // pending would be served twice once the marker expires. Its
            // redelivery count goes too.
            self.q(&queue).redeliveries.remove(&g);
            return RetryNow::Answered;
        }
        if let Some(reason) = self.retry_destination_unusable(&queue) {
            self.dead_letter_retry(member, reason, now);
            return RetryNow::DeadLettered;
        }
        self.q(&queue).pending.insert(member.clone(), score);
        RetryNow::Promoted
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
        self.q(&queue).bury(member, reason, now);
    }

    pub fn reclaim_expired(&mut self, queue: &str, limit: usize, now: Millis) -> ReclaimReport {
        let max = self.config.max_deliveries;
        let dedup_ttl = self.config.result_dedup_ttl_ms;
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
                // finished request as unfinished or poison. Its payload
                // stored apart goes too: the stale ack left it to this
                // holder, which will never ack.
                q.redeliveries.remove(&g);
                self.forget_payload(&claim.member);
                report.ghosts_repaired += 1;
                continue;
            }
            let redeliveries = claim.redeliveries + 1;
            if max > 0 && redeliveries >= max {
                let parsed = wire::parse_member(claim.member.as_bytes()).ok();
                let route = self.config.route(queue, parsed.as_ref());
                let list = route.list;
                // An unusable result list cannot take the record: the dead
                // entry says so, and no marker is written, so an operator's
                // redrive after fixing the key still gets its record.
                let reason = match self.result_list_unusable(queue, &list) {
                    Some(why) => undeliverable_limit_reason(redeliveries, &why),
                    None => {
                        let record = delivery_limit_record(&g, redeliveries, queue);
                        // The claim is gone and the member goes to the dead
                        // hash: no copy is left to answer, so the marker
                        // lives the dedup TTL (lease.rs).
                        let expiry = marker_expiry(now, dedup_ttl);
                        if self.deliver_terminal(&g, (&list, record), expiry, now)
                            && let Some(ttl) = route.ttl_seconds
                        {
                            // The list's EXPIRE, as an ack's push sets it.
                            self.list_ttls.insert(list.clone(), ttl);
                        }
                        // The record answers the generation: its payload
                        // stored apart is no longer needed (as the owner's
                        // ack deletes it). Without a record it stays for a
                        // redrive.
                        self.forget_payload(&claim.member);
                        delivery_limit_reason(redeliveries)
                    }
                };
                self.q(queue).bury(&claim.member, reason, now);
                report.dead_lettered += 1;
            } else {
                q.redeliveries.insert(g, redeliveries);
                q.pending.insert(claim.member, claim.score);
                report.redelivered += 1;
            }
        }
        report
    }

    /// Deletes the payload `member` stored apart (its `internal.payload_ref`), if any.
    pub(super) fn forget_payload(&mut self, member: &Member) {
        if let Some(key) = wire::parse_member(member.as_bytes())
            .ok()
            .and_then(|p| p.payload_ref)
        {
            self.payloads.remove(&key);
        }
    }

    pub fn dead_letter(&mut self, queue: &str, member: &Member, reason: &str, now: Millis) -> bool {
        let q = self.q(queue);
        if q.pending.remove(member).is_none() {
            return false;
        }
        q.bury(member, reason.to_owned(), now);
        true
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

/// The `DELIVERY_LIMIT` record the reclaimer writes for a poison request
/// (naming its generation's token, as every record does).
pub fn delivery_limit_record(generation: &Generation, redeliveries: u32, queue: &str) -> Record {
    let message =
        format!("lease expired {redeliveries} times without a result; member kept in {queue}:dead");
    ResultRecord::error(&generation.id, ErrorCode::DeliveryLimit, message)
        .with_token(generation.token.as_str())
        .to_json_bytes()
        .into()
}
