//! The writer's retry policy: how long to wait after a failed call, and when to split its batch or give up.

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

pub fn backoff(attempts: u32) -> Duration {
    FIRST_BACKOFF
        .saturating_mul(1 << attempts.min(16))
        .min(MAX_BACKOFF)
}

/// The retry policy: `attempts` counts the failure just seen.
pub fn next_step(error: &StoreError, len: usize, attempts: u32) -> Step {
    let wait = backoff(attempts);
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

    #[test]
    fn a_transient_failure_is_retried_whole_with_growing_capped_backoff_and_split_every_third_time()
    {
        let down = StoreError::failed(Op::Ack, "connection refused");
        assert_eq!(next_step(&down, 8, 1), Step::Retry(backoff(1)));
        assert_eq!(next_step(&down, 8, 2), Step::Retry(backoff(2)));
        assert_eq!(next_step(&down, 8, 3), Step::Split(backoff(3)));
        assert_eq!(next_step(&down, 1, 3), Step::Retry(backoff(3)));
        assert!(backoff(1) < backoff(2));
        assert_eq!(backoff(40), MAX_BACKOFF);
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
