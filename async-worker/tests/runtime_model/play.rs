//! One case, played: replicas started, the steps acted out with the invariants checked after each, then the finale.

use super::check;
use super::gates::gate_payload;
use super::reference::{RefState, Slot, Step};
use super::stats;
use super::world::World;
use claim_conformance::CheckedStore;
use claim_core::wire::ResultRecord;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts the steps a case played, for the shrinker.
pub type Seen = Option<Arc<AtomicUsize>>;

/// Plays one case on `world`: the steps, then the finale.
pub async fn play<S: CheckedStore + Clone>(
    mut world: World<S>,
    initial: &RefState,
    steps: &[Step],
    seen: Seen,
) -> Result<(), String> {
    for (slot, s) in initial.slots.iter().enumerate() {
        if *s == Slot::Up {
            world.start(slot);
        }
    }
    world.track_health();
    let verdict = steps_then_finale(&mut world, initial, steps, seen).await;
    world.tear_down().await;
    let snap = check::observe(&world).await;
    tally(&world, &snap, steps.len());
    verdict
}

/// Adds what the case exercised to the test's sums.
fn tally<S: CheckedStore + Clone>(world: &World<S>, snap: &check::Snapshot, steps: usize) {
    stats::add(|s| {
        s.cases += 1;
        s.steps += steps;
        s.requests += world.requests.len();
        for r in &world.requests {
            s.deliveries += world.handler.deliveries(&r.generation.id);
        }
        s.stopped += world.handler.stopped();
        for r in &snap.records {
            *s.records.entry(label(r)).or_default() += 1;
        }
        s.started += world.started;
        s.kills += world.kills;
        for (op, n) in world.watch.sprung.lock().unwrap().iter() {
            *s.sprung.entry(op.name().to_owned()).or_default() += n;
        }
        for r in &world.reports {
            s.lease_lost += r.lease_lost;
            s.duplicates_suppressed += r.duplicates_suppressed;
            s.released += r.released;
            s.swept += r.swept;
            s.redelivered += r.redelivered;
            s.retries += r.retries;
        }
        let injected = world.watch.tally.injected();
        s.determinate += injected.determinate;
        s.indeterminate += injected.indeterminate;
        let (answers, reserved, released) = world.gates.tally();
        for (kind, n) in answers {
            *s.gate_answers.entry(kind).or_default() += n;
        }
        s.reserved += reserved;
        s.gate_released += released;
    });
}

/// A record's code, and which gate verdict ended it where one did.
fn label(record: &ResultRecord) -> String {
    let code = record.error_code.map_or("OK", |c| c.as_str());
    let message = record.error_message.as_deref();
    if record.error_code.is_none() && record.payload == gate_payload(&record.id) {
        format!("{code} (a gate's own)")
    } else if message == Some(check::WAITED_PAST_DEADLINE) {
        format!("{code} (a pool gate's wait)")
    } else {
        code.to_owned()
    }
}

async fn steps_then_finale<S: CheckedStore + Clone>(
    world: &mut World<S>,
    initial: &RefState,
    steps: &[Step],
    seen: Seen,
) -> Result<(), String> {
    let mut state = initial.clone();
    for (i, step) in steps.iter().enumerate() {
        // Tells the shrinker how far the case got.
        if let Some(seen) = &seen {
            seen.fetch_add(1, Ordering::SeqCst);
        }
        world.apply(step).await;
        state = state.after(step);
        let snap = check::observe(world).await;
        check::invariants(world, &state, &snap).map_err(|e| {
            format!(
                "after step {} {step:?}: {e}\n  store {}",
                i + 1,
                check::describe(&snap)
            )
        })?;
    }
    finale(world, &state).await
}

/// Peace: faults healed, traps and handlers released, gate open, every slot
/// running. Everything must settle, and every replica must drain cleanly.
async fn finale<S: CheckedStore + Clone>(
    world: &mut World<S>,
    state: &RefState,
) -> Result<(), String> {
    world.make_peace();
    let s = world.setting.clone();
    let at = |e: String, snap: &check::Snapshot| {
        format!("in the finale: {e}\n  store {}", check::describe(snap))
    };
    let mut round = 0;
    loop {
        let ms = match s.finale_jump_every {
            Some(every) if round % every == 2 => s.lease_ttl_ms + 1_000,
            _ => s.finale_step_ms,
        };
        s.pace.advance(ms).await;
        world.reap();
        world.track_health();
        let snap = check::observe(world).await;
        check::invariants(world, state, &snap).map_err(|e| at(e, &snap))?;
        if check::done(world, &snap) {
            break;
        }
        round += 1;
        if round >= s.finale_rounds {
            return Err(at("the fleet did not settle".to_owned(), &snap));
        }
    }
    if !world.shut_all_down().await {
        let snap = check::observe(world).await;
        return Err(at(
            "a replica did not finish its graceful shutdown".to_owned(),
            &snap,
        ));
    }
    // Releases a drained runtime dropped run on tasks of their own.
    s.pace.advance(s.finale_step_ms).await;
    let snap = check::observe(world).await;
    check::invariants(world, state, &snap).map_err(|e| at(e, &snap))?;
    check::released(world, &snap, true).map_err(|e| at(e, &snap))?;
    check::settled(world, &snap).map_err(|e| at(e, &snap))
}
