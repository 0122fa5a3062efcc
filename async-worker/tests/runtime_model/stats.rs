//! What the cases exercised, summed per test and printed when it ends (`--nocapture` shows it).

use std::cell::RefCell;
use std::collections::BTreeMap;

/// Sums over the cases a test ran (shrinking runs included).
#[derive(Debug, Default)]
pub struct Stats {
    pub cases: usize,
    pub steps: usize,
    pub requests: usize,
    pub deliveries: usize,
    /// Deliveries whose handler the runtime cancelled (lease lost, cancel, shutdown).
    pub stopped: usize,
    pub records: BTreeMap<String, usize>,
    pub started: usize,
    pub kills: usize,
    /// Calls a trap stopped, by operation.
    pub sprung: BTreeMap<String, usize>,
    pub determinate: usize,
    pub indeterminate: usize,
    /// Gate answers, by gate and verdict, and the reservations they made.
    pub gate_answers: BTreeMap<String, usize>,
    pub reserved: usize,
    pub gate_released: usize,
    /// Summed over the runtimes that drained gracefully.
    pub lease_lost: usize,
    pub duplicates_suppressed: usize,
    pub released: usize,
    pub swept: usize,
    pub redelivered: usize,
    pub retries: usize,
}

thread_local! {
    // Each test runs its cases on its own thread.
    static STATS: RefCell<Stats> = RefCell::new(Stats::default());
}

pub fn add(f: impl FnOnce(&mut Stats)) {
    STATS.with(|s| f(&mut s.borrow_mut()));
}

/// The sums so far, as a few lines; starts over.
pub fn take() -> String {
    let s = STATS.with(|s| std::mem::take(&mut *s.borrow_mut()));
    format!(
        "{} cases, {} steps, {} requests, {} deliveries ({} cancelled by the runtime)\n\
         records by code: {:?}\n\
         {} runtimes started, {} killed; calls stopped in a trap: {:?}\n\
         store faults injected: {} determinate, {} indeterminate\n\
         gate answers: {:?}; {} reservations, {} releases run\n\
         drained runtimes reported: {} leases lost, {} duplicates suppressed, {} released, \
         {} swept, {} redelivered, {} retries",
        s.cases,
        s.steps,
        s.requests,
        s.deliveries,
        s.stopped,
        s.records,
        s.started,
        s.kills,
        s.sprung,
        s.determinate,
        s.indeterminate,
        s.gate_answers,
        s.reserved,
        s.gate_released,
        s.lease_lost,
        s.duplicates_suppressed,
        s.released,
        s.swept,
        s.redelivered,
        s.retries
    )
}
