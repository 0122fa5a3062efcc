//! The outcome table as data: every exit path of a claimed request and what happens to its claim.
//!
//! Docs and tests read this table; `docs/ARCHITECTURE.md` carries it verbatim
//! between marker comments and a test keeps the two equal.

/// Every way a request can leave a worker's hands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitPath {
    TerminalResult,
    RetryRequested,
    HandOffCancelled,
    GracefulShutdown,
    OwnerDied,
    LeaseLost,
    GateRefused,
    QueueGateDropped,
    PoolGateRefused,
    PoolGateWaits,
    PoolGateAnswered,
    MemberUnparsable,
    ResultListUnusable,
    OperatorReleased,
}

/// One row of the outcome table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub path: ExitPath,
    pub exit_path: &'static str,
    pub claim_outcome: &'static str,
    pub store_operation: &'static str,
}

/// The outcome table. Each exit path appears exactly once.
pub const OUTCOMES: [Outcome; 14] = [
    Outcome {
        path: ExitPath::TerminalResult,
        exit_path: "Terminal result (success, error, cancelled, deadline, gate drop, invalid)",
        claim_outcome: "acked: record pushed, marker written, claim dropped, atomically",
        store_operation: "`ack`",
    },
    Outcome {
        path: ExitPath::RetryRequested,
        exit_path: "Retry requested",
        claim_outcome: "parked in the retry set (owner-checked, atomic); promoted to pending at its original score when due; a claim or entry whose generation is answered (live marker) is dropped instead",
        store_operation: "`park_retry`, then `promote_due`",
    },
    Outcome {
        path: ExitPath::HandOffCancelled,
        exit_path: "Hand-off cancelled before a worker took it",
        claim_outcome: "released to pending at its original score; dropped instead when its generation is answered (live marker)",
        store_operation: "`release`",
    },
    Outcome {
        path: ExitPath::GracefulShutdown,
        exit_path: "Graceful shutdown, claims still held after the drain timeout",
        claim_outcome: "swept to pending at the original score; not a delivery; dropped instead when its generation is answered (live marker)",
        store_operation: "`release` (the shutdown sweep)",
    },
    Outcome {
        path: ExitPath::OwnerDied,
        exit_path: "Owner dies (lease expires)",
        claim_outcome: "reclaimed to pending at the original score, deliveries + 1; at the limit, `DELIVERY_LIMIT` record and dead set",
        store_operation: "`reclaim_expired`",
    },
    Outcome {
        path: ExitPath::LeaseLost,
        exit_path: "Lease lost (renew finds another owner)",
        claim_outcome: "local handle dropped, in-flight work cancelled; a result already produced is still offered to ack",
        store_operation: "`renew`, then `ack`",
    },
    Outcome {
        path: ExitPath::GateRefused,
        exit_path: "Queue gate refuses, waits or errors",
        claim_outcome: "no claim; stays pending, untouched; what the gate reserved is released at once",
        store_operation: "none",
    },
    Outcome {
        path: ExitPath::QueueGateDropped,
        exit_path: "Queue gate drops",
        claim_outcome: "claimed, then acked with the gate's record (or `GATE_DROPPED`)",
        store_operation: "`claim`, then `ack`",
    },
    Outcome {
        path: ExitPath::PoolGateRefused,
        exit_path: "Pool gate refuses (or its wait passes `--gate-wait-timeout`)",
        claim_outcome: "requeued: parked due now with `retry_count` kept, promoted to pending at its original score",
        store_operation: "`park_retry`, then `promote_due`",
    },
    Outcome {
        path: ExitPath::PoolGateWaits,
        exit_path: "Pool gate waits",
        claim_outcome: "claim kept and renewed while the worker asks again; `DEADLINE_EXCEEDED` record if the deadline comes first",
        store_operation: "`renew`, then `ack` or `park_retry`",
    },
    Outcome {
        path: ExitPath::PoolGateAnswered,
        exit_path: "Pool gate drops or errors",
        claim_outcome: "acked with the gate's record, `GATE_DROPPED` or `GATE_ERROR`",
        store_operation: "`ack`",
    },
    Outcome {
        path: ExitPath::MemberUnparsable,
        exit_path: "Member unparsable",
        claim_outcome: "dead set with reason",
        store_operation: "`dead_letter`",
    },
    Outcome {
        path: ExitPath::ResultListUnusable,
        exit_path: "Result list unusable (holds another type, or names a queue, bookkeeping key or the retry set)",
        claim_outcome: "dead set with the reason (e.g. `result list \"x\" holds a zset`); claim dropped; no record, no marker, so a redrive after the fix gets its record",
        store_operation: "`ack` / `reclaim_expired`",
    },
    Outcome {
        path: ExitPath::OperatorReleased,
        exit_path: "Operator releases the claim (`async-worker admin release`, for a stuck worker)",
        claim_outcome: "released to pending at its original score at once, whoever holds it; not a delivery (count kept); dropped instead when its generation is answered (live marker); the owner's renew then finds it lost",
        store_operation: "`release_claim` (`ClaimAdmin`)",
    },
];

/// The row for one exit path.
pub fn outcome(path: ExitPath) -> &'static Outcome {
    OUTCOMES
        .iter()
        .find(|o| o.path == path)
        .expect("every exit path has a row")
}

/// The table as Markdown, exactly as the docs carry it.
pub fn markdown_table() -> String {
    let mut out = String::from("| Exit path | Claim outcome | Store operation |\n|---|---|---|\n");
    for o in &OUTCOMES {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            o.exit_path, o.claim_outcome, o.store_operation
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_path_has_exactly_one_row() {
        for o in &OUTCOMES {
            assert_eq!(OUTCOMES.iter().filter(|p| p.path == o.path).count(), 1);
            assert_eq!(outcome(o.path), o);
        }
    }

    #[test]
    fn architecture_doc_carries_the_outcome_table_verbatim() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/ARCHITECTURE.md");
        let doc = std::fs::read_to_string(path).expect("docs/ARCHITECTURE.md is readable");
        let start = "<!-- outcome-table:start -->";
        let end = "<!-- outcome-table:end -->";
        let (_, rest) = doc.split_once(start).expect("start marker present");
        let (table, _) = rest.split_once(end).expect("end marker present");
        let normalize = |s: &str| {
            s.lines()
                .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>().join("|"))
                .map(|l| {
                    if l.starts_with("|-") || l.starts_with("|:-") {
                        "|---|---|---|".to_owned()
                    } else {
                        l
                    }
                })
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
        };
        assert_eq!(normalize(table), normalize(&markdown_table()));
    }
}
