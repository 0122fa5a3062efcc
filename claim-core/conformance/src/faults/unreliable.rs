//! A seeded fault-injecting wrapper around any `ClaimStore`: determinate and indeterminate errors on demand.
//!
//! [`UnreliableStore`] decides, call by call, whether the wrapped store's
//! answer reaches the caller:
//!
//! - a **determinate** fault returns [`StoreError::Failed`] without calling
//!   the inner store: the operation did not happen (connection refused);
//! - an **indeterminate** fault calls the inner store, discards its answer
//!   and returns [`StoreError::Indeterminate`]: the operation happened but
//!   the caller cannot know (a timeout after the script ran).
//!
//! Faults come from two sources: random ones, drawn with the configured
//! [`FaultRates`] from a small xorshift generator seeded at construction (the
//! same seed and the same sequence of calls give the same faults), and
//! scripted ones queued with [`UnreliableStore::fail_next`], which hit the
//! next call of one operation whatever the rates. [`UnreliableStore::set_enabled`]
//! switches both off, for setup and inspection.

use claim_core::ClaimStore;
use claim_core::error::StoreError;
use claim_core::layer::{Forward, StoreFuture, StoreLayer};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

mod kinds;

pub use claim_core::op::Op;
use kinds::XorShift;
pub use kinds::{Fault, FaultRates, Injected, Tally};

#[derive(Debug)]
struct State {
    rng: XorShift,
    rates: FaultRates,
    enabled: bool,
    /// Random faults only hit these operations (all when `None`).
    only: Option<Vec<Op>>,
    scripted: VecDeque<(Op, Fault)>,
}

/// Wraps a store and makes some of its calls fail. See the module docs.
#[derive(Debug)]
pub struct UnreliableStore<S> {
    inner: S,
    seed: u64,
    state: Mutex<State>,
    tally: Arc<Tally>,
}

impl<S: ClaimStore> UnreliableStore<S> {
    /// Wraps `inner`; random faults follow `rates`, drawn from `seed`.
    pub fn new(inner: S, seed: u64, rates: FaultRates) -> Self {
        UnreliableStore {
            inner,
            seed,
            state: Mutex::new(State {
                rng: XorShift::new(seed),
                rates,
                enabled: true,
                only: None,
                scripted: VecDeque::new(),
            }),
            tally: Arc::default(),
        }
    }

    /// Counts this store's faults in `tally` (shared with other stores).
    pub fn sharing_tally(mut self, tally: Arc<Tally>) -> Self {
        self.tally = tally;
        self
    }

    /// The wrapped store, for inspection past the faults.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update of the state is a single assignment; a poisoned lock
        // still holds a consistent state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn rates(&self) -> FaultRates {
        self.lock().rates
    }

    pub fn set_rates(&self, rates: FaultRates) {
        self.lock().rates = rates;
    }

    /// Aims random faults at `ops` only (`None`: every operation).
    pub fn set_only(&self, ops: Option<Vec<Op>>) {
        self.lock().only = ops;
    }

    /// Switches every fault, random and scripted, on or off. Scripted faults
    /// stay queued while off.
    pub fn set_enabled(&self, enabled: bool) {
        self.lock().enabled = enabled;
    }

    pub fn is_enabled(&self) -> bool {
        self.lock().enabled
    }

    /// The next call of `op` fails with `fault`, whatever the rates.
    pub fn fail_next(&self, op: Op, fault: Fault) {
        self.lock().scripted.push_back((op, fault));
    }

    /// Scripted faults not yet delivered.
    pub fn scripted_pending(&self) -> usize {
        self.lock().scripted.len()
    }

    /// Drops scripted faults not yet delivered.
    pub fn clear_scripted(&self) {
        self.lock().scripted.clear();
    }

    /// Faults injected so far (in every store sharing this one's tally).
    pub fn injected(&self) -> Injected {
        self.tally.injected()
    }

    /// Decides the fate of one call of `op`.
    fn roll(&self, op: Op) -> Option<Fault> {
        let mut s = self.lock();
        self.tally.calls.fetch_add(1, Ordering::Relaxed);
        if !s.enabled {
            return None;
        }
        let fault = if let Some(i) = s.scripted.iter().position(|(o, _)| *o == op) {
            s.scripted.remove(i).map(|(_, f)| f)
        } else if s.rates.is_none() || s.only.as_ref().is_some_and(|only| !only.contains(&op)) {
            None
        } else {
            let draw = s.rng.next_f64();
            if draw < s.rates.determinate {
                Some(Fault::Determinate)
            } else if draw < s.rates.determinate + s.rates.indeterminate {
                Some(Fault::Indeterminate)
            } else {
                None
            }
        };
        match fault {
            Some(Fault::Determinate) => self.tally.determinate.fetch_add(1, Ordering::Relaxed),
            Some(Fault::Indeterminate) => self.tally.indeterminate.fetch_add(1, Ordering::Relaxed),
            None => 0,
        };
        fault
    }

    fn detail(&self) -> String {
        let calls = self.tally.calls.load(Ordering::Relaxed);
        format!("injected fault (seed {}, call {calls})", self.seed)
    }
}

impl<S: ClaimStore> StoreLayer for UnreliableStore<S> {
    type Inner = S;

    fn inner(&self) -> &S {
        &self.inner
    }

    /// Runs one call through the dice.
    fn around<'a, T: Send + 'a>(&'a self, op: Op, call: &'a Forward<'a, T>) -> StoreFuture<'a, T> {
        Box::pin(async move {
            match self.roll(op) {
                None => call().await,
                Some(Fault::Determinate) => Err(StoreError::failed(op, self.detail())),
                Some(Fault::Indeterminate) => {
                    let _discarded = call().await;
                    Err(StoreError::indeterminate(op, self.detail()))
                }
            }
        })
    }
}
