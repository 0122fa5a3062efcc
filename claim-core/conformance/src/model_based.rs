//! Model-based property test: random workloads run on a store and on the claim-core model in lockstep.
//!
//! Each case builds a fresh store from a [`StoreFactory`] on a manual clock,
//! generates 30–60 transitions from the reference state (submits, resubmits,
//! garbage, cancels, peek+claim, renew, ack, stale acks, release, sweep,
//! retry parking, promotion, reclaim in small batches, worker crashes, time
//! jumps), and applies each to the model and the store. After every step:
//! every store answer equals the model's, the store's observable state
//! equals the model's, and the model keeps its invariants (each generation
//! in one place; at most one terminal record per generation). At the end,
//! every lease runs out and the system is drained; every generation must then
//! have exactly one terminal record and nothing may be left behind.
//!
//! A store crate calls it from an integration test, with its own factory:
//!
//! ```no_run
//! use claim_conformance::StoreFactory;
//! use claim_conformance::model_based::{self, FuturesDriver, Options};
//!
//! fn the_store_follows_the_model<F: StoreFactory>(factory: &F) {
//!     model_based::run(factory, &FuturesDriver, Options::cases(32));
//! }
//! ```
//!
//! claim-core has no runtime: the caller's [`Driver`] runs the async store
//! calls. [`FuturesDriver`] suffices for stores that need no reactor; a
//! tokio-based store wraps its runtime:
//!
//! ```text
//! struct Tokio(tokio::runtime::Runtime);
//! impl Driver for Tokio {
//!     fn block_on<Fut: Future>(&self, future: Fut) -> Fut::Output {
//!         self.0.block_on(future)
//!     }
//! }
//! ```
//!
//! Failing seeds are saved in `proptest-regressions/` of the calling crate
//! (next to its `Cargo.toml`) and replayed first on the next run.
//!
//! With [`Options::faults`] set, the store runs behind an
//! [`UnreliableStore`] injecting determinate and indeterminate faults at
//! those rates, itself behind the [`Retrying`] client, and must still answer
//! every call and show every state exactly as the model does: no fault of
//! either kind may lose or duplicate a record. The faults are seeded from the
//! case itself, so a saved failure replays with the same faults.

mod calls;
mod check;
mod drain;
mod draws;
mod oracle;
mod sim;
mod state;
mod step;
mod transitions;
mod workload;

use super::retrying::Retrying;
use super::unreliable::{FaultRates, UnreliableStore};
use crate::{CheckedStore, StoreFactory};
use claim_core::clock::ManualClock;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestError, TestRunner};
use proptest_state_machine::ReferenceStateMachine;
use state::RefState;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use transitions::Machine;
use workload::Step;

/// Runs a future to completion; the caller supplies the executor.
pub trait Driver {
    fn block_on<Fut: Future>(&self, future: Fut) -> Fut::Output;
}

/// Drives futures with `futures::executor::block_on`: enough for a store
/// whose futures need no reactor, such as the memory store.
#[derive(Debug, Default, Clone, Copy)]
pub struct FuturesDriver;

impl Driver for FuturesDriver {
    fn block_on<Fut: Future>(&self, future: Fut) -> Fut::Output {
        futures::executor::block_on(future)
    }
}

/// How much to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Cases to run; `PROPTEST_CASES` raises it, never lowers it.
    pub cases: u32,
    /// Transitions per case, inclusive bounds.
    pub steps: (usize, usize),
    /// Where failing seeds go; by default `proptest-regressions/<path of the
    /// calling file inside its crate>.txt` in the calling crate.
    pub regressions: Option<PathBuf>,
    /// Store faults to inject (behind a retrying client); none by default.
    pub faults: Option<FaultRates>,
}

impl Options {
    pub fn cases(cases: u32) -> Self {
        Options {
            cases,
            steps: (30, 60),
            regressions: None,
            faults: None,
        }
    }

    /// The same, with the store failing at `rates` behind a retrying client.
    pub fn with_faults(self, rates: FaultRates) -> Self {
        Options {
            faults: Some(rates),
            ..self
        }
    }
}

/// Runs the model-based test against stores from `factory`; panics with the
/// shrunk failing sequence if the store or the model goes wrong.
///
/// Call it directly from the test function (it reads its caller's file to
/// place the regressions file).
#[track_caller]
pub fn run<F: StoreFactory, D: Driver>(factory: &F, driver: &D, options: Options) {
    let caller = std::panic::Location::caller().file();
    let regressions = options
        .regressions
        .clone()
        .or_else(|| regressions_file(caller));
    let from_env = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let config = Config {
        cases: options.cases.max(from_env),
        source_file: Some(caller),
        failure_persistence: Some(Box::new(match regressions {
            // Proptest wants a &'static str; one path per run is leaked.
            Some(path) => {
                FileFailurePersistence::Direct(String::leak(path.to_string_lossy().into_owned()))
            }
            None => FileFailurePersistence::Off,
        })),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let strategy = Machine::sequential_strategy(options.steps.0..=options.steps.1);
    let faults = options.faults;
    let result = runner.run(&strategy, |(initial, steps, seen)| {
        driver
            .block_on(make_and_run(factory, faults, initial, &steps, seen))
            .map_err(TestCaseError::fail)
    });
    match result {
        Ok(()) => {}
        Err(TestError::Abort(why)) => panic!("model-based test aborted: {why}"),
        Err(TestError::Fail(why, (initial, steps, _))) => panic!(
            "model-based test failed: {why}\nminimal failing case (max_deliveries = {}):\n{}",
            initial.model.config().max_deliveries,
            numbered(&steps)
        ),
    }
}

/// The steps of a failing case, one a line, numbered from 1: how a
/// model-based test's failure lists its minimal case.
pub fn numbered<T: std::fmt::Debug>(steps: &[T]) -> String {
    let lines: Vec<String> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| format!("  {:>2}. {s:?}", i + 1))
        .collect();
    lines.join("\n")
}

/// Builds the case's store, behind faults if asked, and runs the case.
async fn make_and_run<F: StoreFactory>(
    factory: &F,
    faults: Option<FaultRates>,
    initial: RefState,
    steps: &[Step],
    seen: Option<Arc<AtomicUsize>>,
) -> Result<(), String> {
    let clock = ManualClock::new(initial.now);
    let store = factory
        .make(initial.model.config().clone(), clock.clone())
        .await;
    let Some(rates) = faults else {
        return run_case(&store, &clock, initial, steps, seen).await;
    };
    let seed = case_seed(&initial, steps);
    let store = Retrying::new(UnreliableStore::new(store, seed, rates));
    let verdict = run_case(&store, &clock, initial, steps, seen).await;
    let injected = store.inner().injected();
    verdict.map_err(|e| {
        format!(
            "{e}\n(fault seed {seed:#x}: {} determinate and {} indeterminate faults in {} calls)",
            injected.determinate, injected.indeterminate, injected.calls
        )
    })
}

/// A fault seed drawn from the case itself (FNV-1a of its description).
fn case_seed(initial: &RefState, steps: &[Step]) -> u64 {
    let text = format!("{}{steps:?}", initial.model.config().max_deliveries);
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One case: the store follows the model step by step, then both drain.
async fn run_case<S: CheckedStore>(
    store: &S,
    clock: &ManualClock,
    initial: RefState,
    steps: &[Step],
    seen: Option<Arc<AtomicUsize>>,
) -> Result<(), String> {
    let mut state = initial;
    verify(store, clock, &state)
        .await
        .map_err(|e| format!("before the first step: {e}"))?;
    for (i, step) in steps.iter().enumerate() {
        if let Some(seen) = &seen {
            seen.fetch_add(1, Ordering::SeqCst);
        }
        let (next, trace) = step::apply(state, step);
        state = next;
        let at = |e: String| format!("step {} {step:?}: {e}", i + 1);
        calls::replay(store, clock, &trace).await.map_err(at)?;
        verify(store, clock, &state).await.map_err(at)?;
    }
    let (state, trace) = drain::drain(state);
    let at = |e: String| format!("draining after the last step: {e}");
    calls::replay(store, clock, &trace).await.map_err(at)?;
    verify(store, clock, &state).await.map_err(at)?;
    check::quiescent(&state).map_err(at)
}

/// The model's invariants hold and the store shows what the model shows.
async fn verify<S: CheckedStore>(
    store: &S,
    clock: &ManualClock,
    state: &RefState,
) -> Result<(), String> {
    check::invariants(state).map_err(|e| format!("model invariant broken: {e}"))?;
    clock.set(state.now);
    let seen = check::observe_store(store, state).await?;
    check::compare(&check::observe_model(state), &seen)
}

/// `<crate>/proptest-regressions/<file inside the crate>.txt` for the calling
/// source file, found from the working directory as proptest does.
pub(crate) fn regressions_file(caller: &str) -> Option<PathBuf> {
    let caller = Path::new(caller);
    let source = if caller.is_absolute() {
        caller.to_path_buf()
    } else {
        let cwd = std::env::current_dir().ok()?;
        cwd.ancestors()
            .map(|dir| dir.join(caller))
            .find(|p| p.is_file())?
    };
    let root = source
        .ancestors()
        .skip(1)
        .find(|dir| dir.join("Cargo.toml").is_file())?;
    let inside = source.strip_prefix(root).ok()?;
    Some(
        root.join("proptest-regressions")
            .join(inside)
            .with_extension("txt"),
    )
}
