//! The store's operations as one enum: errors name them, fault injection aims at them, model-based tests record them.

/// One `ClaimStore` (or `ClaimInspect`) operation: the trait method of the
/// same name. `config` is not an operation: it never reaches the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Now,
    Ping,
    Submit,
    Cancel,
    Peek,
    Claim,
    Renew,
    Cancelled,
    Ack,
    Release,
    Sweep,
    ParkRetry,
    PromoteDue,
    ReclaimExpired,
    DeadLetter,
    Depths,
    RetryDepth,
    Claims,
    DeadEntries,
    RetryEntries,
    Results,
    IsTerminal,
    /// `RedisStore::check_durability`: a backend's own read, not a trait method.
    CheckDurability,
}

impl Op {
    /// Every operation, in trait order.
    pub const ALL: [Op; 23] = [
        Op::Now,
        Op::Ping,
        Op::Submit,
        Op::Cancel,
        Op::Peek,
        Op::Claim,
        Op::Renew,
        Op::Cancelled,
        Op::Ack,
        Op::Release,
        Op::Sweep,
        Op::ParkRetry,
        Op::PromoteDue,
        Op::ReclaimExpired,
        Op::DeadLetter,
        Op::Depths,
        Op::RetryDepth,
        Op::Claims,
        Op::DeadEntries,
        Op::RetryEntries,
        Op::Results,
        Op::IsTerminal,
        Op::CheckDurability,
    ];

    /// The trait method's name, as error messages give it.
    pub fn name(self) -> &'static str {
        match self {
            Op::Now => "now",
            Op::Ping => "ping",
            Op::Submit => "submit",
            Op::Cancel => "cancel",
            Op::Peek => "peek",
            Op::Claim => "claim",
            Op::Renew => "renew",
            Op::Cancelled => "cancelled",
            Op::Ack => "ack",
            Op::Release => "release",
            Op::Sweep => "sweep",
            Op::ParkRetry => "park_retry",
            Op::PromoteDue => "promote_due",
            Op::ReclaimExpired => "reclaim_expired",
            Op::DeadLetter => "dead_letter",
            Op::Depths => "depths",
            Op::RetryDepth => "retry_depth",
            Op::Claims => "claims",
            Op::DeadEntries => "dead_entries",
            Op::RetryEntries => "retry_entries",
            Op::Results => "results",
            Op::IsTerminal => "is_terminal",
            Op::CheckDurability => "check_durability",
        }
    }

    /// True for operations that change the store.
    pub fn mutates(self) -> bool {
        matches!(
            self,
            Op::Submit
                | Op::Cancel
                | Op::Claim
                | Op::Renew
                | Op::Ack
                | Op::Release
                | Op::Sweep
                | Op::ParkRetry
                | Op::PromoteDue
                | Op::ReclaimExpired
                | Op::DeadLetter
        )
    }

    /// True for the read-only inspection methods of `ClaimInspect`.
    pub fn inspects(self) -> bool {
        matches!(
            self,
            Op::Depths
                | Op::RetryDepth
                | Op::Claims
                | Op::DeadEntries
                | Op::RetryEntries
                | Op::Results
                | Op::IsTerminal
        )
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_has_its_own_name_and_displays_as_it() {
        let names: std::collections::BTreeSet<&str> = Op::ALL.iter().map(|o| o.name()).collect();
        assert_eq!(names.len(), Op::ALL.len());
        assert_eq!(Op::ParkRetry.to_string(), "park_retry");
        assert!(Op::ALL.iter().all(|o| !(o.mutates() && o.inspects())));
    }
}
