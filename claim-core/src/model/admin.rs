//! The model's operator operations: redrive and purge of dead entries, release of any owner's claim, pause and resume.

use super::Model;
use crate::admin::Redrive;
use crate::types::{Generation, Member, Millis, OwnerToken};
use crate::wire;

impl Model {
    pub fn redrive_dead(&mut self, queue: &str, members: &[Member], now: Millis) -> Vec<Redrive> {
        members
            .iter()
            .map(|member| {
                if !self.q(queue).dead.contains_key(member) {
                    return Redrive::NotDead;
                }
                let Ok(parsed) = wire::parse_member(member.as_bytes()) else {
                    return Redrive::Unparsable;
                };
                let g = Generation::new(parsed.id.clone(), parsed.token.clone());
                if self.is_terminal(&g, now) {
                    return Redrive::Answered;
                }
                let q = self.q(queue);
                q.dead.remove(member);
                q.redeliveries.remove(&g);
                q.pending.insert(member.clone(), parsed.score());
                Redrive::Moved
            })
            .collect()
    }

    pub fn purge_dead(&mut self, queue: &str, members: &[Member]) -> Vec<bool> {
        let q = self.q(queue);
        members.iter().map(|m| q.dead.remove(m).is_some()).collect()
    }

    /// Ends any owner's claim of `generation`: back to pending, or dropped
    /// when the generation is answered (as [`Model::release`]).
    pub fn release_claim(
        &mut self,
        queue: &str,
        generation: &Generation,
        now: Millis,
    ) -> Option<OwnerToken> {
        let owner = self.queue(queue)?.claims.get(generation)?.owner.clone();
        self.release(owner.on(queue), std::slice::from_ref(generation), now);
        Some(owner)
    }

    pub fn set_paused(&mut self, queue: &str, paused: bool) -> bool {
        if paused {
            self.paused.insert(queue.to_owned())
        } else {
            self.paused.remove(queue)
        }
    }

    /// True while claiming from `queue` is paused.
    pub fn paused(&self, queue: &str) -> bool {
        self.paused.contains(queue)
    }

    /// The number of records in a result list.
    pub fn list_len(&self, list: &str) -> usize {
        self.lists.get(list).map_or(0, |l| l.len())
    }
}
