//! The store's operations as one enum: errors name them, fault injection aims at them, model-based tests record them.

/// Writes [`Op`], [`Op::ALL`], [`Op::name`] and what each does from one
/// list of `Variant = "method_name", Kind`, so a new operation is named once.
macro_rules! operations {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $kind:ident, )*) => {
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

            fn kind(self) -> Kind {
                match self {
                    $( Op::$variant => Kind::$kind, )*
                }
            }
        }
    };
}

operations! {
    Now = "now", Reads,
    Ping = "ping", Reads,
    Submit = "submit", Mutates,
    Enqueue = "enqueue", Mutates,
    FetchPayloads = "fetch_payloads", Reads,
    Cancel = "cancel", Mutates,
    Peek = "peek", Reads,
    PeekAfter = "peek_after", Inspects,
    Claim = "claim", Mutates,
    Renew = "renew", Mutates,
    Cancelled = "cancelled", Reads,
    Ack = "ack", Mutates,
    Release = "release", Mutates,
    ParkRetry = "park_retry", Mutates,
    PromoteDue = "promote_due", Mutates,
    ReclaimExpired = "reclaim_expired", Mutates,
    DeadLetter = "dead_letter", Mutates,
    Depths = "depths", Inspects,
    RetryDepth = "retry_depth", Inspects,
    Claims = "claims", Inspects,
    DeadEntries = "dead_entries", Inspects,
    RetryEntries = "retry_entries", Inspects,
    Results = "results", Inspects,
    IsTerminal = "is_terminal", Inspects,
    ListTtl = "list_ttl", Inspects,
    ListLen = "list_len", Inspects,
    Paused = "paused", Inspects,
    /// `ClaimAdmin` (operator) operations.
    RedriveDead = "redrive_dead", Mutates,
    PurgeDead = "purge_dead", Mutates,
    ReleaseClaim = "release_claim", Mutates,
    SetPaused = "set_paused", Mutates,
    RetryNow = "retry_now", Mutates,
    /// `RedisStore::check_durability`: a backend's own read, not a trait method.
    CheckDurability = "check_durability", Reads,
}

/// What an operation does to the store.
#[derive(PartialEq)]
enum Kind {
    /// Changes the store.
    Mutates,
    /// A read-only inspection (`ClaimInspect`, the conformance suite's `ListReads`).
    Inspects,
    /// Any other read (the hot path's reads, `ping`, a backend's own check).
    Reads,
}

impl Op {
    /// True for operations that change the store.
    pub fn mutates(self) -> bool {
        self.kind() == Kind::Mutates
    }

    /// True for the read-only inspection methods (`ClaimInspect`, and the
    /// conformance suite's `ListReads`).
    pub fn inspects(self) -> bool {
        self.kind() == Kind::Inspects
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
