//! The model's terminal step: ack delivers a record, suppresses a duplicate, or dead-letters a member whose result list is unusable.

use super::{Expiring, Model, unusable_list_reason};
use crate::lease::{marker_expiry, marker_expiry_beside_a_claim};
use crate::marker::record_digest;
use crate::store::{AckItem, AckOutcome};
use crate::stored::Record;
use crate::types::{Generation, Holder, Millis};

impl Model {
    /// Pushes a terminal record unless one exists, with a marker expiring at
    /// `expiry` ([`crate::lease`] says which of its two lifetimes); clears the
    /// producer's keys where they still hold this generation's token. True
    /// when pushed.
    pub(super) fn deliver_terminal(
        &mut self,
        g: &Generation,
        (list, record): (&str, Record),
        expiry: Millis,
        now: Millis,
    ) -> bool {
        if self.is_terminal(g, now) {
            return false;
        }
        self.lists
            .entry(list.to_owned())
            .or_default()
            .push_front(record.clone());
        let value = record_digest(record.as_bytes());
        self.markers.insert(g.clone(), Expiring { value, expiry });
        for keys in [&mut self.active, &mut self.cancels] {
            if keys.get(&g.id).is_some_and(|e| e.value == g.token) {
                keys.remove(&g.id);
            }
        }
        true
    }

    pub fn ack(&mut self, by: Holder<'_>, items: &[AckItem], now: Millis) -> Vec<AckOutcome> {
        items
            .iter()
            .map(|item| self.ack_one(by, item, now))
            .collect()
    }

    /// One item of [`Self::ack`].
    fn ack_one(&mut self, by: Holder<'_>, item: &AckItem, now: Millis) -> AckOutcome {
        let (queue, owner) = (by.queue, by.owner);
        let g = &item.generation;
        let own_record_landed = self.marked_by(g, &item.record, now);
        let unusable = if self.is_terminal(g, now) {
            None
        } else {
            self.result_list_unusable(queue, &item.result_list)
        };
        // Only the claim's holder dead-letters a generation whose list
        // is unusable. A caller that does not hold it is stale: the
        // generation is elsewhere (claimed by another owner, back in
        // pending, parked for retry) and whoever takes it there meets
        // the same list, so this item changes nothing; dead-lettering
        // here would put the generation in two places.
        let held_by_caller = self
            .queue(queue)
            .and_then(|q| q.claims.get(g))
            .is_some_and(|c| c.owner == *owner);
        let deferred = unusable.is_some() && !held_by_caller;
        let pushed = unusable.is_none()
            && self.ours_somewhere(queue, item)
            && self.deliver_terminal(
                g,
                (&item.result_list, item.record.clone()),
                self.ack_marker_expiry(queue, by, item, now),
                now,
            );
        // Nothing above touched the claims: the caller still holds it or not.
        let owned = held_by_caller;
        let q = self.q(queue);
        if owned {
            q.claims.remove(g);
        }
        // A copy of this generation the reclaimer put back while a
        // stale owner still worked on it: the generation is answered
        // (or dead-lettered) now, so the copy must never be served.
        let copy_taken = !deferred && q.pending.remove(&item.member).is_some();
        if copy_taken {
            q.redeliveries.remove(g);
        }
        let unheld = !q.claims.contains_key(g);
        let dead_lettered = unusable.is_some() && !deferred;
        if pushed && item.result_ttl_seconds > 0 {
            let ttl = crate::routing::clamp_ttl(item.result_ttl_seconds);
            self.list_ttls.insert(item.result_list.clone(), ttl);
        }
        // The owner's ack ends the generation: its payload is no
        // longer needed. So does an ack that takes the last pending
        // copy while nobody holds a claim (a stale owner's record
        // after the reclaimer put the request back): no later ack
        // would delete it. A dead-lettered one keeps it for a redrive.
        if (owned || (copy_taken && unheld))
            && !dead_lettered
            && let Some(key) = &item.payload_ref
        {
            self.payloads.remove(key);
        }
        if let Some(reason) = unusable.filter(|_| !deferred) {
            self.q(queue).bury(&item.member, reason, now);
        }
        AckOutcome {
            pushed,
            claim_dropped: owned,
            dead_lettered,
            own_record_landed,
        }
    }

    /// The expiry of the marker an ack of `item` by `by` writes. Where
    /// another owner holds the generation's claim (the caller is a stale
    /// owner), that holder may still ack, renew or lapse: the marker lives
    /// as long as the claim can, from the member's deadline (not its pending
    /// score). Otherwise this ack drops the only claim and takes the pending
    /// copies: no other copy is left, and the marker lives the dedup TTL.
    fn ack_marker_expiry(
        &self,
        queue: &str,
        by: Holder<'_>,
        item: &AckItem,
        now: Millis,
    ) -> Millis {
        let ttl = self.config.result_dedup_ttl_ms;
        let held_by_another = self
            .queue(queue)
            .and_then(|q| q.claims.get(&item.generation))
            .is_some_and(|c| c.owner != *by.owner);
        if held_by_another {
            let deadline = item.member.deadline();
            marker_expiry_beside_a_claim(now, ttl, deadline)
        } else {
            marker_expiry(now, ttl)
        }
    }

    /// Whether an ack of `item` may push: the generation is still in this
    /// queue's bookkeeping, claimed (by the caller or another of ours) or
    /// pending as these bytes (a copy the ack then removes).
    ///
    /// Elsewhere, someone else answers it: a claim-enabled Go processor
    /// holds it or acked it (Go writes no marker, and ours packs its owner
    /// entry, so Redis tells them apart; this model holds our claims only),
    /// or it is parked for retry under new bytes and is served again. A
    /// stale caller's record there would be a second one, so it is
    /// suppressed. [`crate::conformance`] checks the rule on every store.
    pub fn ours_somewhere(&self, queue: &str, item: &AckItem) -> bool {
        self.queue(queue).is_some_and(|q| {
            q.claims.contains_key(&item.generation) || q.pending.score(&item.member).is_some()
        })
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
}
