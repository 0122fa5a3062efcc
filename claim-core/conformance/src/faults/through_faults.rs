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
//! so a failure names the seed that reproduces it. [`through_faults`] is
//! what the runner's `through_faults::<file>::<check>` trials call.

use super::retrying::Retrying;
use super::unreliable::{FaultRates, Injected, Tally, UnreliableStore};
use crate::StoreFactory;
use crate::checks::RunCheck;
use async_trait::async_trait;
use claim_core::clock::ManualClock;
use claim_core::store::StoreConfig;
use futures::FutureExt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A factory whose stores fail at random behind a retrying client.
#[derive(Debug)]
pub struct Faulty<F> {
    factory: Arc<F>,
    seed: u64,
    rates: FaultRates,
    made: AtomicU64,
    tally: Arc<Tally>,
}

impl<F: StoreFactory> Faulty<F> {
    /// Stores from `factory`, the n-th one seeded from `seed` and n.
    pub fn new(factory: Arc<F>, seed: u64, rates: FaultRates) -> Self {
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
impl<F: StoreFactory> StoreFactory for Faulty<F> {
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

/// The fault rates of the through-faults pass: one call in five fails
/// before reaching the store, one in five after.
pub const SUITE_RATES: FaultRates = FaultRates {
    determinate: 0.2,
    indeterminate: 0.2,
};

/// Runs `check` once per seed of `seeds` through faults at [`SUITE_RATES`];
/// a failure names the seeds that reproduce it. A check that made many
/// calls must have met faults of both kinds, or the pass proved nothing.
pub async fn through_faults<F: StoreFactory>(
    factory: Arc<F>,
    name: &str,
    seeds: &[u64],
    check: &RunCheck<Faulty<F>>,
) {
    let mut injected = Injected::default();
    for &run_seed in seeds {
        let seed = check_seed(run_seed, name);
        let faulty = Faulty::new(factory.clone(), seed, SUITE_RATES);
        let outcome = AssertUnwindSafe(check(&faulty)).catch_unwind().await;
        let got = faulty.injected();
        if let Err(panic) = outcome {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "the check panicked".to_owned());
            panic!(
                "{name} failed through faults: {why}\n(run seed {run_seed:#x}, check seed {seed:#x}: \
                 {} determinate, {} indeterminate faults in {} calls)",
                got.determinate, got.indeterminate, got.calls
            );
        }
        injected.determinate += got.determinate;
        injected.indeterminate += got.indeterminate;
        injected.calls += got.calls;
    }
    if injected.calls >= 60 {
        assert!(
            injected.determinate > 0 && injected.indeterminate > 0,
            "{name}: too few faults to mean anything: {injected:?}"
        );
    }
}
