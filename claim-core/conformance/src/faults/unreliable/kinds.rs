//! What the fault wrapper draws with: fault kinds, rates, counters and its random generator.

use std::sync::atomic::{AtomicUsize, Ordering};

/// What kind of failure a call suffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// The operation did not happen.
    Determinate,
    /// The operation happened; the caller sees an error.
    Indeterminate,
}

/// Per-call probabilities of each kind of fault (their sum at most 1).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FaultRates {
    pub determinate: f64,
    pub indeterminate: f64,
}

impl FaultRates {
    /// No random faults.
    pub const NONE: FaultRates = FaultRates {
        determinate: 0.0,
        indeterminate: 0.0,
    };

    pub fn new(determinate: f64, indeterminate: f64) -> Self {
        FaultRates {
            determinate,
            indeterminate,
        }
    }

    pub fn is_none(&self) -> bool {
        self.determinate <= 0.0 && self.indeterminate <= 0.0
    }
}

/// How many faults were injected so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Injected {
    pub determinate: usize,
    pub indeterminate: usize,
    /// Calls made, faulty or not.
    pub calls: usize,
}

/// Fault counters, shareable between stores (see [`UnreliableStore::sharing_tally`](super::UnreliableStore::sharing_tally)).
#[derive(Debug, Default)]
pub struct Tally {
    pub(super) determinate: AtomicUsize,
    pub(super) indeterminate: AtomicUsize,
    pub(super) calls: AtomicUsize,
}

impl Tally {
    pub fn injected(&self) -> Injected {
        Injected {
            determinate: self.determinate.load(Ordering::Relaxed),
            indeterminate: self.indeterminate.load(Ordering::Relaxed),
            calls: self.calls.load(Ordering::Relaxed),
        }
    }
}

/// xorshift64*: small, seedable, good enough to pick faults.
#[derive(Debug, Clone)]
pub(super) struct XorShift(u64);

impl XorShift {
    pub(super) fn new(seed: u64) -> Self {
        // Spread the seed (splitmix64) so that nearby seeds differ; never zero.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        XorShift((z ^ (z >> 31)) | 1)
    }

    /// Uniform in [0, 1).
    pub(super) fn next_f64(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_reproducible_and_roughly_uniform() {
        let draws = |seed| {
            let mut r = XorShift::new(seed);
            (0..10_000).map(|_| r.next_f64()).collect::<Vec<_>>()
        };
        assert_eq!(draws(7), draws(7));
        assert_ne!(draws(7), draws(8));
        let d = draws(0);
        assert!(d.iter().all(|x| (0.0..1.0).contains(x)));
        let below = d.iter().filter(|x| **x < 0.25).count();
        assert!(
            (2_200..2_800).contains(&below),
            "{below} of 10000 below 0.25"
        );
    }
}
