//! What is checked: the model's invariants after every step, the store's observable state against the model's, and quiescence at the end.

use super::state::{LISTS, QUEUES, RefState, tagged};
use crate::CheckedStore;
use claim_core::Record;
use claim_core::model::Model;
use claim_core::store::{ClaimInfo, PendingEntry, QueueDepths};
use claim_core::types::{Generation, Member};
use claim_core::wire;
use std::collections::BTreeMap;

/// Everything a store lets one observe, in a canonical order.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// Per queue: pending members with scores, in rank order.
    pub pending: Vec<Vec<PendingEntry>>,
    /// Per queue: live claims, by generation.
    pub claims: Vec<Vec<ClaimInfo>>,
    /// Per queue: dead members and reasons, by member.
    pub dead: Vec<Vec<(Member, String)>>,
    pub depths: Vec<QueueDepths>,
    pub retry: Vec<PendingEntry>,
    pub retry_depth: usize,
    /// Per list: records oldest first, as JSON (key order may differ between stores).
    pub results: Vec<Vec<serde_json::Value>>,
    /// Per submitted generation: does it have a terminal marker?
    pub terminal: Vec<(Generation, bool)>,
}

fn json(record: &Record) -> serde_json::Value {
    serde_json::from_slice(record.as_bytes()).unwrap_or_else(|_| {
        serde_json::Value::String(String::from_utf8_lossy(record.as_bytes()).into_owned())
    })
}

fn dead_view(entries: Vec<claim_core::store::DeadEntry>) -> Vec<(Member, String)> {
    let mut dead: Vec<_> = entries.into_iter().map(|d| (d.member, d.reason)).collect();
    dead.sort();
    dead
}

fn sorted_claims(mut claims: Vec<ClaimInfo>) -> Vec<ClaimInfo> {
    claims.sort_by(|a, b| a.generation.cmp(&b.generation));
    claims
}

/// What the model shows.
pub fn observe_model(state: &RefState) -> Observation {
    let m = &state.model;
    Observation {
        pending: QUEUES.iter().map(|q| m.peek(q, 0, usize::MAX)).collect(),
        claims: QUEUES.iter().map(|q| sorted_claims(m.claims(q))).collect(),
        dead: QUEUES
            .iter()
            .map(|q| dead_view(m.dead_entries(q)))
            .collect(),
        depths: QUEUES.iter().map(|q| m.depths(q)).collect(),
        retry: m.retry_entries(),
        retry_depth: m.retry_depth(),
        results: LISTS
            .iter()
            .map(|l| m.results(l).iter().map(json).collect())
            .collect(),
        terminal: state
            .generations
            .keys()
            .map(|g| (g.clone(), m.is_terminal(g, state.now)))
            .collect(),
    }
}

/// What the store shows (its clock must read the state's time).
pub async fn observe_store<S: CheckedStore>(
    store: &S,
    state: &RefState,
) -> Result<Observation, String> {
    fn err(what: &'static str) -> impl Fn(claim_core::StoreError) -> String {
        move |e| format!("reading {what} from the store failed: {e}")
    }
    let mut o = Observation {
        pending: Vec::new(),
        claims: Vec::new(),
        dead: Vec::new(),
        depths: Vec::new(),
        retry: store.retry_entries().await.map_err(err("retry entries"))?,
        retry_depth: store.retry_depth().await.map_err(err("retry depth"))?,
        results: Vec::new(),
        terminal: Vec::new(),
    };
    for q in QUEUES {
        o.pending
            .push(store.peek(q, 0, 1_000_000).await.map_err(err("pending"))?);
        o.claims
            .push(sorted_claims(store.claims(q).await.map_err(err("claims"))?));
        o.dead.push(dead_view(
            store.dead_entries(q).await.map_err(err("dead entries"))?,
        ));
        o.depths.push(store.depths(q).await.map_err(err("depths"))?);
    }
    for l in LISTS {
        let records = store.results(l).await.map_err(err("results"))?;
        o.results.push(records.iter().map(json).collect());
    }
    for g in state.generations.keys() {
        o.terminal.push((
            g.clone(),
            store
                .is_terminal(g)
                .await
                .map_err(err("terminal markers"))?,
        ));
    }
    Ok(o)
}

/// Names the first part of the store's state that differs from the model's.
pub fn compare(model: &Observation, store: &Observation) -> Result<(), String> {
    macro_rules! field {
        ($name:ident, $label:expr) => {
            if model.$name != store.$name {
                return Err(format!(
                    "the store's {} differ from the model's\n  model: {:?}\n  store: {:?}",
                    $label, model.$name, store.$name
                ));
            }
        };
    }
    field!(pending, format!("pending members of {QUEUES:?}"));
    field!(claims, format!("claims of {QUEUES:?}"));
    field!(dead, format!("dead entries of {QUEUES:?}"));
    field!(depths, format!("depths of {QUEUES:?}"));
    field!(retry, "retry entries");
    field!(retry_depth, "retry depth");
    field!(results, format!("result lists {LISTS:?}"));
    field!(terminal, "terminal markers");
    Ok(())
}

/// The generation a member belongs to; `None` for garbage.
fn generation_of(member: &Member) -> Option<Generation> {
    wire::parse_member(member.as_bytes())
        .ok()
        .map(|p| Generation::new(p.id, p.token))
}

/// Each generation is in at most one place among pending, claimed, retry and
/// dead (a generation the producer submitted n times: at most n); each
/// unparsable member in at most one.
fn places(state: &RefState) -> Result<(), String> {
    let m: &Model = &state.model;
    let mut seen: BTreeMap<Generation, Vec<String>> = BTreeMap::new();
    let mut junk: BTreeMap<Member, Vec<String>> = BTreeMap::new();
    let mut note = |member: &Member, generation: Option<Generation>, place: String| match generation
        .or_else(|| generation_of(member))
    {
        Some(g) => seen.entry(g).or_default().push(place),
        None => junk.entry(member.clone()).or_default().push(place),
    };
    for q in QUEUES {
        m.peek(q, 0, usize::MAX)
            .iter()
            .for_each(|e| note(&e.member, None, format!("pending {q}")));
        m.claims(q).iter().for_each(|c| {
            note(
                &c.member,
                Some(c.generation.clone()),
                format!("claimed {q}"),
            )
        });
        m.dead_entries(q)
            .iter()
            .for_each(|d| note(&d.member, None, format!("dead {q}")));
    }
    m.retry_entries()
        .iter()
        .for_each(|e| note(&e.member, None, "retry".to_owned()));
    for (g, where_) in &seen {
        let copies = state.generations.get(g).map_or(1, |s| s.copies) as usize;
        if where_.len() > copies {
            return Err(format!(
                "generation {g} (submitted {copies}×) is in {} places: {where_:?}",
                where_.len()
            ));
        }
    }
    match junk.iter().find(|(_, where_)| where_.len() > 1) {
        Some((member, where_)) => Err(format!("unparsable {member:?} is in {where_:?}")),
        None => Ok(()),
    }
}

/// Records per generation: those a worker wrote name their generation; the
/// store's own (`DELIVERY_LIMIT`) name only the id. Every generation with a
/// record is terminal, none has two, and each id has as many records as it
/// has terminal generations.
fn records(state: &RefState) -> Result<(), String> {
    let m = &state.model;
    let mut by_generation: BTreeMap<Generation, usize> = BTreeMap::new();
    let mut by_id: BTreeMap<String, usize> = BTreeMap::new();
    for list in LISTS {
        for record in m.results(list) {
            let value = json(&record);
            let id = value["id"]
                .as_str()
                .ok_or_else(|| format!("record without an id in {list}: {value}"))?;
            *by_id.entry(id.to_owned()).or_default() += 1;
            if let Some(g) = value["payload"].as_str().and_then(tagged) {
                *by_generation.entry(g).or_default() += 1;
            }
        }
    }
    for (g, n) in &by_generation {
        if *n > 1 {
            return Err(format!("generation {g} has {n} terminal records"));
        }
        if !m.is_terminal(g, state.now) {
            return Err(format!(
                "generation {g} has a record but no terminal marker"
            ));
        }
    }
    let mut terminal_by_id: BTreeMap<String, usize> = BTreeMap::new();
    for g in state
        .generations
        .keys()
        .filter(|g| m.is_terminal(g, state.now))
    {
        *terminal_by_id.entry(g.id.clone()).or_default() += 1;
    }
    for id in by_id.keys().chain(terminal_by_id.keys()) {
        let (records, terminal) = (
            by_id.get(id).copied().unwrap_or(0),
            terminal_by_id.get(id).copied().unwrap_or(0),
        );
        if records != terminal {
            return Err(format!(
                "id {id:?} has {records} records but {terminal} terminal generations"
            ));
        }
    }
    Ok(())
}

/// The invariants that hold after every step.
pub fn invariants(state: &RefState) -> Result<(), String> {
    if let Some(why) = &state.violation {
        return Err(format!("a model answer broke the design: {why}"));
    }
    places(state)?;
    records(state)
}

/// After the drain: nothing left pending, claimed or parked, no bookkeeping
/// left behind; every generation has its one terminal record; every
/// unparsable member is dead.
pub fn quiescent(state: &RefState) -> Result<(), String> {
    let m = &state.model;
    for q in QUEUES {
        let d = m.depths(q);
        if d.pending != 0 || d.claimed != 0 {
            return Err(format!("queue {q} did not drain: {d:?}"));
        }
        let counters = m.queue(q).map(|s| s.redeliveries.len()).unwrap_or(0);
        if counters != 0 {
            return Err(format!(
                "queue {q} keeps {counters} redelivery counters of finished requests"
            ));
        }
        let dead = m.dead_entries(q);
        for (_, member) in state.garbage.iter().filter(|(gq, _)| gq == q) {
            if !dead.iter().any(|e| e.member == *member) {
                return Err(format!(
                    "unparsable {member:?} is not in the dead set of {q}"
                ));
            }
        }
    }
    if m.retry_depth() != 0 {
        return Err(format!("{} retries are still parked", m.retry_depth()));
    }
    // A generation whose result list is unusable ends in a dead set instead.
    let unusable: Vec<Generation> = QUEUES
        .iter()
        .flat_map(|q| m.dead_entries(q))
        .filter(|d| d.reason.contains("result list"))
        .filter_map(|d| generation_of(&d.member))
        .collect();
    if let Some(g) = state
        .generations
        .keys()
        .find(|g| !m.is_terminal(g, state.now) && !unusable.contains(g))
    {
        return Err(format!("generation {g} never got a terminal record"));
    }
    // With every generation terminal, `records` now demands exactly one each.
    records(state)
}
