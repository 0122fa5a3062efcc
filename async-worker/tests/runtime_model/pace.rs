//! How time passes: tokio's paused time on the memory store, or real time plus explicit jumps on Redis.

use claim_core::{Clock, Millis};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The case's start time.
pub const START: Millis = Millis(1_700_000_000_000);

/// Store and runtime time for the Redis runs: real elapsed time since the
/// start, plus every jump the test made (so a jump expires leases at once
/// while heartbeats and reclaimers keep running on real time).
#[derive(Debug)]
pub struct JumpClock {
    origin: Instant,
    /// (clock before, clock after) of each jump, in order.
    jumps: Mutex<Vec<(Millis, Millis)>>,
}

impl JumpClock {
    pub fn new() -> Self {
        JumpClock {
            origin: Instant::now(),
            jumps: Mutex::new(Vec::new()),
        }
    }

    fn offset(jumps: &[(Millis, Millis)]) -> u64 {
        jumps.iter().map(|(from, to)| from.until(*to)).sum()
    }

    pub fn jump(&self, ms: u64) {
        let mut jumps = self.jumps.lock().unwrap();
        let from = START
            .plus(self.origin.elapsed().as_millis() as u64)
            .plus(Self::offset(&jumps));
        jumps.push((from, from.plus(ms)));
    }

    /// Real time between two readings of the clock: the clock time between
    /// them less every jump made in between, during which no task ran.
    pub fn real_between(&self, from: Millis, to: Millis) -> u64 {
        let jumps = self.jumps.lock().unwrap();
        let jumped: u64 = jumps
            .iter()
            .filter(|(start, end)| from <= *start && *end <= to)
            .map(|(start, end)| start.until(*end))
            .sum();
        from.until(to).saturating_sub(jumped)
    }

    /// When a moment the clock jumped over was first reached: the end of
    /// that jump (a lease expiring mid-jump expired, in real time, at its end).
    pub fn reached(&self, at: Millis) -> Millis {
        let jumps = self.jumps.lock().unwrap();
        jumps
            .iter()
            .find(|(from, to)| *from < at && at <= *to)
            .map_or(at, |(_, to)| *to)
    }
}

impl Clock for JumpClock {
    fn now(&self) -> Millis {
        let jumps = self.jumps.lock().unwrap();
        START
            .plus(self.origin.elapsed().as_millis() as u64)
            .plus(Self::offset(&jumps))
    }
}

/// Which way a run keeps time.
#[derive(Debug, Clone)]
pub enum Pace {
    /// tokio paused time: sleeping advances it, firing every timer in order.
    Paused,
    /// Real time with explicit jumps (Redis).
    Real(std::sync::Arc<JumpClock>),
}

/// Jumps shorter than this are real sleeps on Redis; longer ones jump.
const SHORTEST_JUMP_MS: u64 = 5_000;
/// The longest real sleep of one step on Redis.
const LONGEST_REAL_SLEEP: Duration = Duration::from_millis(80);

impl Pace {
    /// Lets `ms` of the run's time pass.
    pub async fn advance(&self, ms: u64) {
        match self {
            Pace::Paused => tokio::time::sleep(Duration::from_millis(ms)).await,
            Pace::Real(clock) => {
                if ms >= SHORTEST_JUMP_MS {
                    clock.jump(ms);
                }
                // Give heartbeats, reclaimers and writers real time to act.
                let real =
                    Duration::from_millis(ms).clamp(Duration::from_millis(5), LONGEST_REAL_SLEEP);
                tokio::time::sleep(real).await;
            }
        }
    }

    /// A short wait while polling for something (a trap to spring).
    pub async fn poll(&self) {
        match self {
            Pace::Paused => tokio::time::sleep(Duration::from_millis(100)).await,
            Pace::Real(_) => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    }

    /// Other tasks run `n` turns; no time passes on purpose.
    pub async fn turns(&self, n: u8) {
        for _ in 0..n {
            tokio::task::yield_now().await;
        }
    }

    /// When a lease expiring at `at` became reclaimable in the run's own time.
    pub fn reached(&self, at: Millis) -> Millis {
        match self {
            Pace::Paused => at,
            Pace::Real(clock) => clock.reached(at),
        }
    }

    /// How long the runtime's tasks had to act between two moments of the
    /// run: all of it on paused time (sleeping fires every timer in
    /// order), the real time alone on Redis (a jump moves the clock while
    /// no reclaimer gets a turn).
    pub fn acting_time(&self, from: Millis, to: Millis) -> u64 {
        match self {
            Pace::Paused => from.until(to),
            Pace::Real(clock) => clock.real_between(from, to),
        }
    }
}
