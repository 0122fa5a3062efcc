//! The writer's retry policy: how long to wait after a failed call, and when to split its batch or give up; and the jitter every retrying loop of the runtime waits with.

use claim_core::StoreError;
use std::time::Duration;

pub const FIRST_BACKOFF: Duration = Duration::from_millis(50);
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Transient failures in a row after which a group is split anyway.
pub const SPLIT_AFTER: u32 = 3;

/// What to do with a group after its call failed.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Resend it whole after this long.
    Retry(Duration),
    /// Resend each half on its own after this long.
    Split(Duration),
    /// Its only item is refused for good.
    GiveUp,
}

/// The backoff after `attempts` failures: 50 ms doubling, capped at 5 s.
pub fn backoff(attempts: u32) -> Duration {
    FIRST_BACKOFF
        .saturating_mul(1 << attempts.min(16))
        .min(MAX_BACKOFF)
}

/// A pause in [b/2, b): replicas that met one outage (a Redis restart, a
/// failover) retry spread out instead of in step, and no pause is longer
/// than the backoff it jitters.
pub fn jittered(b: Duration) -> Duration {
    let half = b / 2;
    half + half.mul_f64(rand::random::<f64>())
}

/// The retry policy: `attempts` counts the failure just seen; a transient
/// failure waits its backoff, jittered.
pub fn next_step(error: &StoreError, len: usize, attempts: u32) -> Step {
    let wait = jittered(backoff(attempts));
    match (error.is_transient(), len > 1) {
        (true, true) if attempts.is_multiple_of(SPLIT_AFTER) => Step::Split(wait),
        (true, _) => Step::Retry(wait),
        (false, true) => Step::Split(Duration::ZERO),
        (false, false) => Step::GiveUp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use claim_core::Op;

    /// The wait of a retry after `attempts` failures: within its jitter.
    fn jittered_backoff_of(wait: Duration, attempts: u32) -> bool {
        (backoff(attempts) / 2..backoff(attempts)).contains(&wait)
    }

    #[test]
    fn a_transient_failure_is_retried_whole_with_growing_capped_backoff_and_split_every_third_time()
    {
        let down = StoreError::failed(Op::Ack, "connection refused");
        let step = |len, attempts| match next_step(&down, len, attempts) {
            Step::Retry(wait) if jittered_backoff_of(wait, attempts) => "retry",
            Step::Split(wait) if jittered_backoff_of(wait, attempts) => "split",
            other => panic!("{other:?} after {attempts} failures"),
        };
        assert_eq!(
            [step(8, 1), step(8, 2), step(8, 3)],
            ["retry", "retry", "split"]
        );
        assert_eq!(step(1, 3), "retry");
        assert!(backoff(1) < backoff(2));
        assert_eq!(backoff(40), MAX_BACKOFF);
    }

    #[test]
    fn jitter_spreads_a_pause_over_its_upper_half_and_never_lengthens_it() {
        let b = Duration::from_millis(800);
        let pauses: Vec<Duration> = (0..200).map(|_| jittered(b)).collect();
        assert!(pauses.iter().all(|p| (b / 2..b).contains(p)), "{pauses:?}");
        let distinct: std::collections::BTreeSet<_> = pauses.iter().collect();
        assert!(
            distinct.len() > 100,
            "spread out, not in step: {distinct:?}"
        );
        assert_eq!(jittered(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn a_permanent_failure_splits_at_once_and_gives_up_on_a_single_item() {
        let refused = StoreError::rejected(Op::Ack, "WRONGTYPE");
        assert_eq!(next_step(&refused, 2, 1), Step::Split(Duration::ZERO));
        assert_eq!(next_step(&refused, 1, 1), Step::GiveUp);
        let invalid = StoreError::invalid(Op::Ack, "bad list name");
        assert_eq!(next_step(&invalid, 1, 4), Step::GiveUp);
    }
}
