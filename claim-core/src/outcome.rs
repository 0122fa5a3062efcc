//! The outcome table as data: every exit path of a claimed request and what happens to its claim.
//!
//! Docs and tests read this table; `docs/ARCHITECTURE.md` carries it verbatim
//! between marker comments and a test keeps the two equal.

/// One row of the outcome table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub path: ExitPath,
    pub exit_path: &'static str,
    pub claim_outcome: &'static str,
    pub store_operation: &'static str,
}

/// Writes [`ExitPath`] and [`OUTCOMES`] from one list of rows
/// (`Variant: exit path, claim outcome, store operation;`), so each exit
/// path has exactly one row.
macro_rules! outcomes {
    ($( $path:ident: $exit:literal, $claim:literal, $op:literal; )*) => {
        /// Every way a request can leave a worker's hands.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ExitPath {
            $( $path, )*
        }

        /// The outcome table, one row per exit path, in the docs' order.
        pub const OUTCOMES: [Outcome; [$($exit),*].len()] = [$(Outcome {
            path: ExitPath::$path,
            exit_path: $exit,
            claim_outcome: $claim,
            store_operation: $op,
        }),*];
    };
}

outcomes! {
    TerminalResult:
        "Terminal result (success, error, cancelled, deadline, gate drop, invalid)",
        "acked: record pushed, marker written, claim dropped, atomically",
        "`ack`";
    RetryRequested:
        "Retry requested",
        "parked in the retry set (owner-checked, atomic); promoted to pending at its original score when due; a claim or entry whose generation is answered (live marker) is dropped instead",
        "`park_retry`, then `promote_due`";
    HandOffCancelled:
        "Hand-off cancelled before a worker took it",
        "released to pending at its original score; dropped instead when its generation is answered (live marker)",
        "`release`";
    GracefulShutdown:
        "Graceful shutdown, claims still held after the drain timeout",
        "swept to pending at the original score; not a delivery; dropped instead when its generation is answered (live marker)",
        "`release` (the shutdown sweep)";
    OwnerDied:
        "Owner dies (lease expires)",
        "reclaimed to pending at the original score, deliveries + 1; at the limit, `DELIVERY_LIMIT` record and dead set",
        "`reclaim_expired`";
    LeaseLost:
        "Lease lost (renew finds another owner)",
        "local handle dropped, in-flight work cancelled; a result already produced is still offered to ack",
        "`renew`, then `ack`";
    GateRefused:
        "Queue gate refuses, waits or errors",
        "no claim; stays pending, untouched; what the gate reserved is released at once",
        "none";
    QueueGateDropped:
        "Queue gate drops",
        "claimed, then acked with the gate's record (or `GATE_DROPPED`)",
        "`claim`, then `ack`";
    PoolGateRefused:
        "Pool gate refuses (or its wait passes `--gate-wait-timeout`)",
        "requeued: parked due now with `retry_count` kept, promoted to pending at its original score",
        "`park_retry`, then `promote_due`";
    PoolGateWaits:
        "Pool gate waits",
        "claim kept and renewed while the worker asks again; `DEADLINE_EXCEEDED` record if the deadline comes first",
        "`renew`, then `ack` or `park_retry`";
    PoolGateAnswered:
        "Pool gate drops or errors",
        "acked with the gate's record, `GATE_DROPPED` or `GATE_ERROR`",
        "`ack`";
    MemberUnparsable:
        "Member unparsable",
        "dead set with reason",
        "`dead_letter`";
    ResultListUnusable:
        "Result list unusable (holds another type, or names a queue, bookkeeping key or the retry set)",
        "dead set with the reason (e.g. `result list \"x\" holds a zset`); claim dropped; no record, no marker, so a redrive after the fix gets its record",
        "`ack` / `reclaim_expired`";
    OperatorReleased:
        "Operator releases the claim (`async-worker admin release`, for a stuck worker)",
        "released to pending at its original score at once, whoever holds it; not a delivery (count kept); dropped instead when its generation is answered (live marker); the owner's renew then finds it lost",
        "`release_claim` (`ClaimAdmin`)";
}

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
