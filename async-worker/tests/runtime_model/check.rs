//! What must hold: after every step (each generation in one place at most, never two records, every record earned, a retry count only a handler's retry raised, every gate reservation released once, expired claims reclaimed in time) and at the end (exactly one record each, nothing left behind, nothing left reserved).

use super::gates::{gate_failure, gate_payload};
use super::handler::{Returned, error_message, success_body};
use super::pace::Pace;
use super::reference::{GateAct, GateAt, GateRecord, RefState, Verdict};
use super::world::{Kind, Q, RESULTS, World};
use claim_conformance::CheckedStore;
use claim_core::store::{ClaimInfo, DeadEntry, PendingEntry};
use claim_core::wire::{self, ErrorCode, ResultRecord};
use claim_core::{Generation, Millis};
use std::collections::BTreeMap;

/// The store as the test sees it at one moment (runtimes' calls held off).
#[derive(Debug)]
pub struct Snapshot {
    pub now: Millis,
    pub pending: Vec<PendingEntry>,
    pub claims: Vec<ClaimInfo>,
    pub retry: Vec<PendingEntry>,
    pub dead: Vec<DeadEntry>,
    pub records: Vec<ResultRecord>,
    /// Per submitted generation: does it have a terminal marker?
    pub terminal: Vec<bool>,
}

impl Snapshot {
    /// Nothing pending, claimed or parked.
    pub fn idle(&self) -> bool {
        self.pending.is_empty() && self.claims.is_empty() && self.retry.is_empty()
    }

    fn summary(&self) -> String {
        let ids = |entries: &[PendingEntry]| -> Vec<String> {
            entries.iter().map(|e| id_of(e.member.as_bytes())).collect()
        };
        let claims: Vec<String> = self
            .claims
            .iter()
            .map(|c| {
                format!(
                    "{}(lease {}, {}×)",
                    c.generation, c.lease_expiry.0, c.redeliveries
                )
            })
            .collect();
        format!(
            "at {}: pending {:?}, claimed {claims:?}, retry {:?}, dead {}, records {:?}",
            self.now.0,
            ids(&self.pending),
            ids(&self.retry),
            self.dead.len(),
            self.records.iter().map(|r| &r.id).collect::<Vec<_>>()
        )
    }
}

fn id_of(member: &[u8]) -> String {
    wire::parse_member(member).map_or_else(|_| "<garbage>".to_owned(), |p| p.id)
}

/// The generation a member belongs to, read as leniently as the runtime
/// reads a member with an invalid field; `None` for garbage.
fn generation_of(member: &[u8]) -> Option<Generation> {
    match wire::parse_member(member) {
        Ok(p) => Some(Generation::new(p.id, p.token)),
        Err(wire::MemberError::Invalid { id, .. }) => {
            let value: serde_json::Value = serde_json::from_slice(member).ok()?;
            let token = value.pointer("/internal/request_token")?.as_str()?;
            Some(Generation::new(id, token))
        }
        Err(_) => None,
    }
}

/// Reads the store while every replica's calls wait.
pub async fn observe<S: CheckedStore + Clone>(world: &World<S>) -> Snapshot {
    let _frozen = world.watch.freeze.write().await;
    let s = &world.base;
    let mut terminal = Vec::new();
    for r in &world.requests {
        terminal.push(s.is_terminal(&r.generation).await.expect("is_terminal"));
    }
    let records = s.results(RESULTS).await.expect("results");
    Snapshot {
        now: world.now(),
        pending: s.peek(Q, 0, 1_000_000).await.expect("peek"),
        claims: s.claims(Q).await.expect("claims"),
        retry: s.retry_entries().await.expect("retry entries"),
        dead: s.dead_entries(Q).await.expect("dead entries"),
        records: records
            .iter()
            .map(|r| ResultRecord::from_json(r.as_bytes()).expect("a readable record"))
            .collect(),
        terminal,
    }
}

/// The record the pool gate's wait ends with when the deadline comes first.
pub const WAITED_PAST_DEADLINE: &str = "deadline passed while the pool gate held the request";

/// The invariants after every step, `state` being what the reference
/// knows then; the first broken one.
pub fn invariants<S: CheckedStore + Clone>(
    world: &World<S>,
    state: &RefState,
    snap: &Snapshot,
) -> Result<(), String> {
    if let Some(why) = world.watch.violation.lock().unwrap().clone() {
        return Err(why);
    }
    if let Some(why) = world.gates.violation() {
        return Err(why);
    }
    let mut places: BTreeMap<Generation, Vec<&str>> = BTreeMap::new();
    let mut note = |member: &[u8], place| {
        if let Some(g) = generation_of(member) {
            places.entry(g).or_default().push(place);
        }
    };
    snap.pending
        .iter()
        .for_each(|e| note(e.member.as_bytes(), "pending"));
    snap.retry
        .iter()
        .for_each(|e| note(e.member.as_bytes(), "retry"));
    snap.dead
        .iter()
        .for_each(|e| note(e.member.as_bytes(), "dead"));
    for c in &snap.claims {
        places
            .entry(c.generation.clone())
            .or_default()
            .push("claimed");
    }
    if let Some((g, at)) = places.iter().find(|(_, at)| at.len() > 1) {
        return Err(format!("{g} is in {} places at once: {at:?}", at.len()));
    }
    // Until its record exists, a request is always somewhere: never lost.
    for (r, terminal) in world.requests.iter().zip(&snap.terminal) {
        let somewhere = match r.kind {
            Kind::Garbage => {
                let here = |e: &PendingEntry| e.member == r.member;
                snap.pending.iter().any(here) || snap.dead.iter().any(|d| d.member == r.member)
            }
            Kind::Valid | Kind::Invalid => places.contains_key(&r.generation),
        };
        if !*terminal && !somewhere {
            return Err(format!(
                "{} is lost: no record, and nowhere in the store",
                r.generation
            ));
        }
    }
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for record in &snap.records {
        *count.entry(record.id.as_str()).or_default() += 1;
        earned(world, state, snap, record)?;
    }
    if let Some((id, n)) = count.iter().find(|(_, n)| **n > 1) {
        return Err(format!("{id} has {n} terminal records"));
    }
    for (r, terminal) in world.requests.iter().zip(&snap.terminal) {
        let recorded = count.contains_key(r.generation.id.as_str());
        if recorded != *terminal {
            return Err(format!(
                "{}: a record {recorded} but a terminal marker {terminal}",
                r.generation
            ));
        }
    }
    retry_counts_kept(world, snap)?;
    released(world, snap, false)?;
    reclaimed_in_time(world, snap)
}

/// A requeue (pool gate refusal, wait timeout) keeps the retry count: no
/// member anywhere counts more retries than its handler asked for.
fn retry_counts_kept<S: CheckedStore + Clone>(
    world: &World<S>,
    snap: &Snapshot,
) -> Result<(), String> {
    for entry in snap.pending.iter().chain(&snap.retry) {
        let Ok(parsed) = wire::parse_member(entry.member.as_bytes()) else {
            continue;
        };
        let asked = world.handler.times(&parsed.id, |r| {
            matches!(r, Returned::Answered(Verdict::Retry { .. }))
        });
        if u64::from(parsed.retry_count) > asked as u64 {
            return Err(format!(
                "{} has retry_count {} after {asked} retries its handler asked for",
                parsed.id, parsed.retry_count
            ));
        }
    }
    Ok(())
}

/// No gate reservation is released twice, and none of a runtime that is
/// gone is left unreleased: with `all`, every runtime is gone; else those
/// gone before time last moved on paused time (every task has run since),
/// and none on real time, where that is not decidable.
pub fn released<S: CheckedStore + Clone>(
    world: &World<S>,
    snap: &Snapshot,
    all: bool,
) -> Result<(), String> {
    let paused = matches!(world.setting.pace, Pace::Paused);
    let gone = |replica: usize| {
        all || (paused && world.gone.get(&replica).is_some_and(|at| *at < snap.now))
    };
    world.gates.misreleased(gone).map_or(Ok(()), Err)
}

/// A record must come from something that happened: a handler answer, the
/// producer's cancel, a passed deadline, a timeout, or the delivery limit.
fn earned<S: CheckedStore + Clone>(
    world: &World<S>,
    state: &RefState,
    snap: &Snapshot,
    record: &ResultRecord,
) -> Result<(), String> {
    let id = record.id.as_str();
    let Some(index) = world.requests.iter().position(|r| r.generation.id == id) else {
        return Err(format!(
            "a record for {id}, which nobody submitted: {record:?}"
        ));
    };
    let request = &world.requests[index];
    // A gate's record needs the reference to allow it and a gate to have
    // answered so.
    let gated = |allowed: GateRecord, answer: &dyn Fn(&GateAt, &GateAct, usize) -> bool| {
        state.may_end_with(index, allowed)
            && world.gates.answered(id, |a| answer(&a.at, &a.act, a.call))
    };
    let h = &world.handler;
    let message = record.error_message.as_deref().unwrap_or_default();
    let delivery = |text: &str, make: fn(&str, usize) -> String| {
        (0..h.deliveries(id)).find(|n| make(id, *n) == text)
    };
    let ok = match record.error_code {
        None if record.payload == gate_payload(id) => gated(GateRecord::Own, &|_, act, _| {
            *act == GateAct::Drop { own: true }
        }),
        None => delivery(&record.payload, success_body)
            .is_some_and(|n| h.returned(id, n) == Some(Returned::Answered(Verdict::Success))),
        Some(ErrorCode::InferenceError) => {
            message.starts_with("request timed out after")
                || delivery(message, error_message)
                    .is_some_and(|n| h.returned(id, n) == Some(Returned::Answered(Verdict::Error)))
        }
        Some(ErrorCode::Cancelled) => world.cancelled.contains(id),
        Some(ErrorCode::GateDropped) => gated(GateRecord::Dropped, &|_, act, _| {
            *act == GateAct::Drop { own: false }
        }),
        Some(ErrorCode::GateError) => gated(GateRecord::Error, &|at, act, call| {
            *at == GateAt::Pool
                && *act == GateAct::Fail
                && message == format!("Pool gating error: {}", gate_failure(id, call))
        }),
        Some(ErrorCode::DeadlineExceeded) if message == WAITED_PAST_DEADLINE => {
            let waited = |at: &GateAt, act: &GateAct, _| {
                *at == GateAt::Pool && matches!(act, GateAct::Wait { .. } | GateAct::Hang)
            };
            gated(GateRecord::WaitedPastDeadline, &waited) && snap.now >= request.deadline
        }
        Some(ErrorCode::DeadlineExceeded) if message.contains("would pass the deadline") => h
            .ever(id, |r| {
                matches!(r, Returned::Answered(Verdict::Retry { .. }))
            }),
        Some(ErrorCode::DeadlineExceeded) => snap.now >= request.deadline,
        Some(ErrorCode::DeliveryLimit) => world.base.config().max_deliveries > 0,
        Some(ErrorCode::InvalidRequest) => request.kind == Kind::Invalid,
        Some(_) => false,
    };
    ok.then_some(())
        .ok_or_else(|| format!("a record nothing earned: {record:?}"))
}

/// No claim outlives its lease by more than one reclaim interval while a
/// healthy replica (running, fault-free, untrapped since before the lease
/// ran out) is there to reclaim it: a dead replica's claims come back in
/// time. A claim born with its lease already run out counts from its birth;
/// on Redis only real time counts, not the clock's jumps.
fn reclaimed_in_time<S: CheckedStore + Clone>(
    world: &World<S>,
    snap: &Snapshot,
) -> Result<(), String> {
    let s = &world.setting;
    let interval = s.runtime.reclaim_interval.as_millis() as u64;
    let claimed_at = world.watch.claimed_at.lock().unwrap();
    for c in &snap.claims {
        let born = claimed_at
            .get(&(c.generation.clone(), c.owner.clone()))
            .copied()
            .unwrap_or_default();
        let expired = s.pace.reached(c.lease_expiry).max(born);
        // Time a jump skipped gave no reclaimer a turn: a claim that ran
        // out just before one is due one interval of real time later.
        let overdue = s.pace.acting_time(expired, snap.now) > interval + s.slack_ms;
        let watched = world.healthy_since.iter().flatten().any(|h| *h <= expired);
        if overdue && watched {
            let owner = &c.owner;
            let alive = world.slots.iter().flatten().any(|r| r.owner == *owner);
            return Err(format!(
                "the claim of {} by {} owner {owner} expired at {} and is still there at {} (reclaim interval {interval} ms)",
                c.generation,
                if alive { "live" } else { "dead" },
                c.lease_expiry.0,
                snap.now.0
            ));
        }
    }
    Ok(())
}

/// After the finale: every request has exactly one record, nothing is
/// pending, claimed or parked, unparsable members are dead, and the dead
/// set holds no other request but delivery-limit victims.
pub fn settled<S: CheckedStore + Clone>(world: &World<S>, snap: &Snapshot) -> Result<(), String> {
    if !snap.idle() {
        return Err(format!("work left behind: {}", snap.summary()));
    }
    for r in &world.requests {
        let id = r.generation.id.as_str();
        let n = snap.records.iter().filter(|rec| rec.id == id).count();
        let want = usize::from(r.kind != Kind::Garbage);
        if n != want {
            return Err(format!(
                "{} has {n} records: {}",
                r.generation,
                snap.summary()
            ));
        }
        if r.kind == Kind::Garbage && !snap.dead.iter().any(|d| d.member == r.member) {
            return Err(format!(
                "unparsable {} is not in the dead set",
                r.generation
            ));
        }
    }
    for d in snap
        .dead
        .iter()
        .filter(|d| wire::parse_member(d.member.as_bytes()).is_ok())
    {
        let id = id_of(d.member.as_bytes());
        let limit = snap
            .records
            .iter()
            .any(|r| r.id == id && r.error_code == Some(ErrorCode::DeliveryLimit));
        if !limit {
            return Err(format!(
                "{id} is dead without a DELIVERY_LIMIT record: {}",
                d.reason
            ));
        }
    }
    Ok(())
}

/// Whether the finale may stop: idle and every request answered.
pub fn done<S: CheckedStore + Clone>(world: &World<S>, snap: &Snapshot) -> bool {
    let answered = world
        .requests
        .iter()
        .zip(&snap.terminal)
        .all(|(r, t)| *t || r.kind == Kind::Garbage);
    snap.idle() && answered
}

pub fn describe(snap: &Snapshot) -> String {
    snap.summary()
}
