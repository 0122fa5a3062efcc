//! Applying a transition to the reference state: the calls each participant makes, recorded for replay.

use super::calls::{Batch, Call, Entry};
use super::sim::{Sim, ack_item};
use super::state::{Held, LEASE_TTL_MS, QUEUES, RefState, Shape, Submitted, garbage, member};
use super::workload::{Step, Verdict};
use claim_core::store::{ParkItem, RenewOutcome, Submission};
use claim_core::types::{Generation, OwnerToken};
use claim_core::wire;
use std::collections::BTreeMap;

/// Groups generations by the queue their claim lives in.
/// `worker` lets go of `generations` (a release or a park): its owner
/// token and the claims it held among them, by queue.
fn let_go(sim: &mut Sim, worker: usize, generations: &[Generation]) -> (OwnerToken, Groups) {
    let w = &mut sim.state.workers[worker];
    let (owner, groups) = (w.owner(), by_queue(generations, &w.held));
    for g in generations {
        w.held.remove(g);
    }
    (owner, groups)
}

/// One release call per queue of `groups` (a shutdown sweep is releases).
fn return_per_queue(sim: &mut Sim, owner: &OwnerToken, groups: Groups) {
    for (queue, claims) in groups {
        let generations = claims.into_iter().map(|(g, _)| g).collect();
        sim.call(Call::Release(Batch::new(&queue, owner, generations)));
    }
}

/// Claims held, by queue.
type Groups = BTreeMap<String, Vec<(Generation, Held)>>;

fn by_queue(gens: &[Generation], held: &BTreeMap<Generation, Held>) -> Groups {
    let mut groups = Groups::new();
    for g in gens {
        if let Some(h) = held.get(g) {
            groups
                .entry(h.queue.clone())
                .or_default()
                .push((g.clone(), h.clone()));
        }
    }
    groups
}

/// Applies one transition, returning the new state and the calls it made.
pub fn apply(state: RefState, step: &Step) -> (RefState, Vec<Entry>) {
    let mut sim = Sim::new(state);
    run(&mut sim, step);
    (sim.state, sim.trace)
}

fn run(sim: &mut Sim, step: &Step) {
    match step {
        Step::Submit {
            queue,
            deadline_in,
            shape,
        } => submit_new(sim, None, QUEUES[*queue], *deadline_in, *shape),
        Step::Resubmit {
            of,
            queue,
            deadline_in,
            shape,
        } => submit_new(sim, Some(&of.id), QUEUES[*queue], *deadline_in, *shape),
        Step::SubmitAgain { generation } => {
            let Some(s) = sim.state.generations.get_mut(generation) else {
                return;
            };
            s.copies += 1;
            let (queue, submission) = (s.queue.clone(), s.submission.clone());
            sim.submit(&queue, submission);
        }
        Step::SubmitGarbage { queue, kind } => {
            let n = sim.state.next_serial();
            let queue = QUEUES[*queue];
            let m = garbage(*kind, n);
            let deadline = sim.state.now_secs() + 60;
            let submission = Submission {
                member: m.clone(),
                generation: Generation::new(format!("junk{n}"), ""),
                deadline,
                payload: None,
            };
            sim.submit(queue, submission);
            sim.state.garbage.push((queue.to_owned(), m));
        }
        Step::Cancel { generation } => {
            sim.call(Call::Cancel {
                id: generation.id.clone(),
            });
        }
        Step::Claim {
            worker,
            queue,
            offset,
            limit,
        } => {
            let queue = QUEUES[*queue];
            let members = sim
                .peek(queue, *offset, *limit)
                .into_iter()
                .map(|e| e.member)
                .collect();
            let owner = sim.state.workers[*worker].owner();
            let claimed = sim.claim_members(queue, &owner, members);
            sim.state.workers[*worker].held.extend(claimed);
        }
        Step::Peek {
            worker,
            queue,
            limit,
        } => {
            let queue = QUEUES[*queue];
            let seen = sim
                .peek(queue, 0, *limit)
                .into_iter()
                .map(|e| (queue.to_owned(), e.member));
            sim.state.workers[*worker].peeked = seen.collect();
        }
        Step::ClaimPeeked { worker } => {
            let peeked = std::mem::take(&mut sim.state.workers[*worker].peeked);
            let owner = sim.state.workers[*worker].owner();
            for queue in QUEUES {
                let members = peeked
                    .iter()
                    .filter(|(q, _)| q == queue)
                    .map(|(_, m)| m.clone())
                    .collect();
                let claimed = sim.claim_members(queue, &owner, members);
                sim.state.workers[*worker].held.extend(claimed);
            }
        }
        Step::Renew { worker } => renew(sim, *worker),
        Step::Ack {
            worker,
            generations,
            verdict,
        } => ack(sim, *worker, generations, *verdict, false),
        Step::AckLost {
            worker,
            generations,
            verdict,
        } => ack(sim, *worker, generations, *verdict, true),
        Step::Release {
            worker,
            generations,
        } => {
            let (owner, groups) = let_go(sim, *worker, generations);
            return_per_queue(sim, &owner, groups);
        }
        Step::Park {
            worker,
            generations,
            due_in_ms,
        } => {
            let (owner, groups) = let_go(sim, *worker, generations);
            let due = sim.state.now.plus(*due_in_ms);
            for (queue, claims) in groups {
                let items = claims
                    .into_iter()
                    .map(|(generation, h)| {
                        let stamped = wire::stamp_retry(h.member.as_bytes(), &queue)
                            .expect("claimed members parse");
                        ParkItem {
                            generation,
                            member: stamped.into(),
                            due,
                        }
                    })
                    .collect();
                sim.call(Call::ParkRetry(Batch::new(&queue, &owner, items)));
            }
        }
        Step::Sweep { worker } => {
            let w = &mut sim.state.workers[*worker];
            let gens: Vec<_> = w.held.keys().cloned().collect();
            let (owner, groups) = (w.owner(), by_queue(&gens, &w.held));
            w.restart();
            return_per_queue(sim, &owner, groups);
        }
        Step::Crash { worker } => sim.state.workers[*worker].restart(),
        Step::Promote { limit } => {
            sim.promote(*limit);
        }
        Step::Reclaim { queue, limit } => {
            sim.reclaim(QUEUES[*queue], *limit);
        }
        Step::Tick { ms } => sim.state.now = sim.state.now.plus(*ms),
        Step::Stall { ms } => {
            sim.state.now = sim.state.now.plus(LEASE_TTL_MS + ms);
            for q in QUEUES {
                while sim.reclaim(q, 16).more {}
            }
        }
    }
}

/// Submits a new generation, numbered by the next serial, of request `id`
/// (a new request `r<n>` if none).
fn submit_new(sim: &mut Sim, id: Option<&str>, queue: &str, deadline_in: i64, shape: Shape) {
    let n = sim.state.next_serial();
    let id = id.map_or_else(|| format!("r{n}"), str::to_owned);
    let g = Generation::new(id, format!("t{n}"));
    let deadline = sim.state.now_secs() + deadline_in;
    let submission = Submission {
        member: member(&g, queue, deadline, shape),
        generation: g.clone(),
        deadline,
        payload: None,
    };
    sim.submit(queue, submission.clone());
    sim.state.generations.insert(
        g,
        Submitted {
            queue: queue.to_owned(),
            submission,
            copies: 1,
        },
    );
}

fn renew(sim: &mut Sim, worker: usize) {
    let w = &sim.state.workers[worker];
    let gens: Vec<_> = w.held.keys().cloned().collect();
    let (owner, groups) = (w.owner(), by_queue(&gens, &w.held));
    for (queue, claims) in groups {
        let generations: Vec<_> = claims.iter().map(|(g, _)| g.clone()).collect();
        let outcomes = sim.renew(&queue, &owner, generations);
        let w = &mut sim.state.workers[worker];
        for ((g, h), outcome) in claims.into_iter().zip(outcomes) {
            if outcome == RenewOutcome::Lost {
                w.held.remove(&g);
                w.lost.insert(g, h);
            }
        }
    }
}

fn ack(sim: &mut Sim, worker: usize, generations: &[Generation], verdict: Verdict, lost: bool) {
    let w = &mut sim.state.workers[worker];
    let owner = w.owner();
    let source = if lost { &mut w.lost } else { &mut w.held };
    let groups = by_queue(generations, source);
    for g in generations {
        source.remove(g);
    }
    for (queue, claims) in groups {
        let config = sim.state.model.config();
        let items = claims
            .iter()
            .map(|(g, h)| ack_item(g, h, &owner, verdict, config))
            .collect();
        sim.ack(&queue, &owner, items);
    }
}
