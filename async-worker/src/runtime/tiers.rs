//! Tier-priority ordering inside a worker pool: a queue of a higher tier that waits for a worker holds back claiming by the pool's lower tiers, so its requests take the next free worker.
//!
//! Go's `tier-priority` merge policy claims eagerly into six in-memory lanes
//! and dispatches the lowest non-empty lane first. Here nothing is claimed
//! before a worker is free, so no claim waits in memory at all; the order
//! is kept at claim time instead: each queue's tier comes from its static
//! `tier` label (`interactive` 0, `async` 1, anything else 2; Go's README
//! assumes one priority per queue), and a consumer claims only while no
//! consumer of a higher tier in its pool is hungry (it found work and is
//! waiting for a worker, or is claiming what it found).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;

/// How many tiers there are (the lane's tier half: interactive, async, batch).
const TIERS: usize = 3;

/// The tier a queue's static labels put it in.
pub(crate) fn tier_of(labels: &BTreeMap<String, String>, tier_label: &str) -> usize {
    match labels.get(tier_label).map(String::as_str) {
        Some("interactive") => 0,
        Some("async") => 1,
        _ => 2,
    }
}

/// The hungry consumers of one pool, per tier.
#[derive(Debug, Default)]
pub(crate) struct TierOrder {
    hungry: [AtomicUsize; TIERS],
    changed: Notify,
}

impl TierOrder {
    /// Whether a consumer of a tier above `tier` is hungry.
    pub fn outranked(&self, tier: usize) -> bool {
        self.hungry[..tier.min(TIERS)]
            .iter()
            .any(|h| h.load(Ordering::SeqCst) > 0)
    }

    /// Marks a consumer of `tier` hungry until the guard drops.
    pub fn hungry(self: &Arc<Self>, tier: usize) -> Hungry {
        let tier = tier.min(TIERS - 1);
        self.hungry[tier].fetch_add(1, Ordering::SeqCst);
        Hungry {
            order: self.clone(),
            tier,
        }
    }

    /// Resolves once some consumer stops being hungry.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }
}

/// A hungry consumer; dropping it wakes the tiers below.
#[derive(Debug)]
pub(crate) struct Hungry {
    order: Arc<TierOrder>,
    tier: usize,
}

impl Drop for Hungry {
    fn drop(&mut self) {
        self.order.hungry[self.tier].fetch_sub(1, Ordering::SeqCst);
        self.order.changed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_tier_comes_from_its_tier_label() {
        let labels = |v: &str| BTreeMap::from([("tier".to_owned(), v.to_owned())]);
        assert_eq!(tier_of(&labels("interactive"), "tier"), 0);
        assert_eq!(tier_of(&labels("async"), "tier"), 1);
        assert_eq!(tier_of(&labels("batch"), "tier"), 2);
        assert_eq!(tier_of(&BTreeMap::new(), "tier"), 2);
        assert_eq!(tier_of(&labels("interactive"), "class"), 2);
    }

    #[test]
    fn only_a_hungry_higher_tier_outranks_and_only_while_it_is_hungry() {
        let order = Arc::new(TierOrder::default());
        let interactive = order.hungry(0);
        assert!(order.outranked(2));
        assert!(order.outranked(1));
        assert!(!order.outranked(0), "a tier never outranks itself");
        drop(interactive);
        assert!(!order.outranked(2));
        let _batch = order.hungry(2);
        assert!(
            !order.outranked(1),
            "a lower tier never outranks a higher one"
        );
    }
}
