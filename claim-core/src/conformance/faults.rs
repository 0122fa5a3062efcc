//! The conformance suite through faults: every check on a store that fails at random, behind a retrying client.
//!
//! Each check runs unchanged against `Retrying<UnreliableStore<S>>`: the
//! store injects determinate and indeterminate faults at the given rates,
//! the [`Retrying`] client retries and reconciles them the way a careful
//! worker does, and the check must still see exactly the answers and the
//! state it sees without faults. A retried ack must not push a second
//! record, a reconciled claim must not lose its member, and so on: an
//! error of either kind never loses or duplicates a record.
//!
//! Faults are seeded per check (from the run's seed and the check's name),
//! so a failure names the seed that reproduces it.

use super::retrying::Retrying;
use super::unreliable::{FaultRates, Injected, Tally, UnreliableStore};
use super::{
    CheckResult, QuietPanics, StoreFactory, checks, print_result, print_summary, run_check,
};
use crate::store::StoreConfig;
use crate::types::ManualClock;
use async_trait::async_trait;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A factory whose stores fail at random behind a retrying client.
#[derive(Debug)]
pub struct Faulty<'a, F> {
    factory: &'a F,
    seed: u64,
    rates: FaultRates,
    made: AtomicU64,
    tally: Arc<Tally>,
}

impl<'a, F: StoreFactory> Faulty<'a, F> {
    /// Stores from `factory`, the n-th one seeded from `seed` and n.
    pub fn new(factory: &'a F, seed: u64, rates: FaultRates) -> Self {
        Faulty {
            factory,
            seed,
            rates,
            made: AtomicU64::new(0),
            tally: Arc::default(),
        }
    }

    /// Faults injected into every store made so far.
    pub fn injected(&self) -> Injected {
        self.tally.injected()
    }
}

#[async_trait]
impl<F: StoreFactory> StoreFactory for Faulty<'_, F> {
    type Store = Retrying<UnreliableStore<F::Store>>;

    async fn make(&self, config: StoreConfig, clock: Arc<ManualClock>) -> Self::Store {
        let store = self.factory.make(config, clock).await;
        let n = self.made.fetch_add(1, Ordering::Relaxed);
        let seed = mix(self.seed, n);
        let faulty =
            UnreliableStore::new(store, seed, self.rates).sharing_tally(self.tally.clone());
        Retrying::new(faulty)
    }
}

/// A seed from a seed and a number (FNV-1a over both).
fn mix(seed: u64, n: u64) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in seed.to_le_bytes().into_iter().chain(n.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The seed a check runs with in a run seeded `seed`.
pub fn check_seed(seed: u64, check: &str) -> u64 {
    check.bytes().fold(seed, |h, b| mix(h, u64::from(b)))
}

/// What a run through faults did.
#[derive(Debug)]
pub struct FaultRun {
    pub results: Vec<CheckResult>,
    /// Faults injected over the whole run.
    pub injected: Injected,
}

/// Runs every check (or those whose name contains `filter`) once per seed
/// through faults at `rates`, printing one line per check and seed.
pub async fn run_all<F: StoreFactory>(
    factory: &F,
    rates: FaultRates,
    seeds: &[u64],
    filter: Option<&str>,
) -> FaultRun {
    let mut results = Vec::new();
    let mut injected = Injected::default();
    let _quiet = QuietPanics::install();
    for &run_seed in seeds {
        for check in checks::<Faulty<'_, F>>() {
            if filter.is_some_and(|f| !check.name.contains(f)) {
                continue;
            }
            let seed = check_seed(run_seed, check.name);
            let faulty = Faulty::new(factory, seed, rates);
            let failure = run_check(&check, &faulty).await;
            let got = faulty.injected();
            let note = format!(
                " [seed {seed:#x}: {} determinate, {} indeterminate faults in {} calls]",
                got.determinate, got.indeterminate, got.calls
            );
            print_result(check.name, &failure, &note);
            injected.determinate += got.determinate;
            injected.indeterminate += got.indeterminate;
            injected.calls += got.calls;
            results.push(CheckResult {
                name: check.name,
                failure: failure
                    .map(|why| format!("{why}\n(run seed {run_seed:#x}, check seed {seed:#x})")),
            });
        }
    }
    print_summary(&results);
    FaultRun { results, injected }
}
