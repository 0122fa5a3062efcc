//! The store's operations as one enum: errors name them, fault injection aims at them, model-based tests record them.

/// Writes [`Op`], [`Op::ALL`] and [`Op::name`] from one list of
/// `Variant = "method_name"`, so a new operation is named once.
macro_rules! operations {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, )*) => {
        /// One store operation: the trait method of the same name (of
        /// `ClaimStore`, `ClaimInspect`, `ClaimProducer`, `ClaimAdmin`, or the
        /// conformance suite's `ListReads`). `config` is not an operation: it
        /// never reaches the store.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Op {
            $( $(#[$doc])* $variant, )*
        }

        impl Op {
            /// Every operation, in trait order.
            pub const ALL: [Op; [$($name),*].len()] = [$(Op::$variant),*];

            /// The trait method's name, as error messages give it.
            pub fn name(self) -> &'static str {
                match self {
                    $( Op::$variant => $name, )*
                }
            }
        }
    };
}

operations! {
    Now = "now",
    Ping = "ping",
    Submit = "submit",
    Enqueue = "enqueue",
    FetchPayloads = "fetch_payloads",
    Cancel = "cancel",
    Peek = "peek",
    PeekAfter = "peek_after",
    Claim = "claim",
    Renew = "renew",
    Cancelled = "cancelled",
    Ack = "ack",
    Release = "release",
    ParkRetry = "park_retry",
    PromoteDue = "promote_due",
    ReclaimExpired = "reclaim_expired",
    DeadLetter = "dead_letter",
    Depths = "depths",
    RetryDepth = "retry_depth",
    Claims = "claims",
    DeadEntries = "dead_entries",
    RetryEntries = "retry_entries",
    Results = "results",
    IsTerminal = "is_terminal",
    ListTtl = "list_ttl",
    ListLen = "list_len",
    Paused = "paused",
    /// `ClaimAdmin` (operator) operations.
    RedriveDead = "redrive_dead",
    PurgeDead = "purge_dead",
    ReleaseClaim = "release_claim",
    SetPaused = "set_paused",
    RetryNow = "retry_now",
    /// `RedisStore::check_durability`: a backend's own read, not a trait method.
    CheckDurability = "check_durability",
}

impl Op {
    /// True for operations that change the store.
    pub fn mutates(self) -> bool {
        matches!(
            self,
            Op::Submit
                | Op::Enqueue
                | Op::Cancel
                | Op::Claim
                | Op::Renew
                | Op::Ack
                | Op::Release
                | Op::ParkRetry
                | Op::PromoteDue
                | Op::ReclaimExpired
                | Op::DeadLetter
                | Op::RedriveDead
                | Op::PurgeDead
                | Op::ReleaseClaim
                | Op::SetPaused
                | Op::RetryNow
        )
    }

    /// True for the read-only inspection methods (`ClaimInspect`, and the
    /// conformance suite's `ListReads`).
    pub fn inspects(self) -> bool {
        matches!(
            self,
            Op::Depths
                | Op::PeekAfter
                | Op::RetryDepth
                | Op::Claims
                | Op::DeadEntries
                | Op::RetryEntries
                | Op::Results
                | Op::IsTerminal
                | Op::ListTtl
                | Op::ListLen
                | Op::Paused
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
