//! The end of every case: leases run out, and the reclaimer and a well-behaved worker run until nothing is left.

use super::calls::Entry;
use super::sim::{Sim, ack_item};
use super::state::{QUEUES, RefState};
use super::workload::Verdict;
use claim_core::types::{Millis, OwnerToken};

/// Rounds after which a drain that still finds work gives up (one is normally enough).
const MAX_ROUNDS: usize = 8;
/// Small batches, so `more` and repeated calls are exercised here too.
const BATCH: usize = 3;

/// The latest time anything is waiting for: a lease expiry or a retry due time.
fn horizon(state: &RefState) -> Millis {
    let m = &state.model;
    let leases = QUEUES
        .iter()
        .flat_map(|q| m.claims(q))
        .map(|c| c.lease_expiry);
    let retries = m.retry_entries().into_iter().map(|e| e.score.as_millis());
    leases.chain(retries).max().unwrap_or(state.now)
}

fn settled(state: &RefState) -> bool {
    let m = &state.model;
    m.retry_depth() == 0
        && QUEUES.iter().all(|q| {
            let d = m.depths(q);
            d.pending == 0 && d.claimed == 0
        })
}

/// Runs the system to quiescence: time passes every lease and retry, due
/// retries are promoted, expired claims reclaimed in batches until none are
/// left, and a fresh worker claims and acks everything pending.
pub fn drain(state: RefState) -> (RefState, Vec<Entry>) {
    let mut sim = Sim::new(state);
    for round in 0..MAX_ROUNDS {
        if settled(&sim.state) {
            break;
        }
        sim.state.now = horizon(&sim.state).max(sim.state.now).plus(1);
        while sim.promote(BATCH) > 0 {}
        for q in QUEUES {
            // Each batch removes what it reports, so this ends unless the store is wrong.
            for _ in 0..1_000 {
                if !sim.reclaim(q, BATCH).more {
                    break;
                }
            }
        }
        let owner = OwnerToken::new(format!("finisher.{round}"));
        for q in QUEUES {
            for _ in 0..1_000 {
                let members: Vec<_> = sim
                    .peek(q, 0, BATCH)
                    .into_iter()
                    .map(|e| e.member)
                    .collect();
                if members.is_empty() {
                    break;
                }
                let claimed = sim.claim_members(q, &owner, members);
                if claimed.is_empty() {
                    continue;
                }
                let config = sim.state.model.config();
                let items = claimed
                    .iter()
                    .map(|(g, h)| ack_item(g, h, &owner, Verdict::Success, config))
                    .collect();
                sim.ack(q, &owner, items);
            }
        }
    }
    (sim.state, sim.trace)
}
