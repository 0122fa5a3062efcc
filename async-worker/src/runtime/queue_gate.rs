//! The queue gate at poll time: each peeked member's verdict before any claim, so a refused or failed member stays pending, unclaimed, with no write.
//!
//! Verdicts (Go's queue gate, see docs/OPERATIONS.md for where we differ):
//! - `Continue`: claimed and dispatched; what the gate reserved is released
//!   when the claim leaves this runtime (record landed, retry parked, lease
//!   lost, swept at shutdown) or at once when the claim is not won.
//! - `Drop`: claimed and answered with the gate's record, or `GATE_DROPPED`.
//! - `Refuse`: left pending (`gate_closed`, or `quota_exhausted` when the
//!   gate classified it `overflow`).
//! - `Wait`: left pending like `Refuse`. Go's queue gate dispatches it like
//!   `Continue`, which lets a queue-level `wait-on-refuse` wave everything
//!   through; leaving it pending is what such a gate asks for.
//! - an error: left pending (`error`), logged.
//!
//! Members past their deadline and unparsable ones skip the gate: they are
//! answered without a handler call, so there is nothing to admit.
//!
//! A gate that does not decide within a poll interval (a blocking gate
//! waiting for a slot) leaves that member and the rest of the poll pending,
//! counted `gate_closed`, and the members it let through are claimed. The
//! bound is what keeps a blocking gate from waiting on itself: the slot it
//! waits for may be held by a member this same poll admitted, which is
//! claimed and handled (and gives the slot back) only once the poll's
//! decisions are done. A dropped decision leaves nothing reserved.

use super::candidate::{Candidate, Plan};
use super::consumer::Consumer;
use crate::gate::{GateRequest, Releases, Verdict};
use crate::metrics::{self, GateReason};

/// The label a classifying gate sets, and the value that means "over quota".
const CLASSIFICATION: &str = "classification";
const OVERFLOW: &str = "overflow";

/// How a refusal (or wait) is counted, queue or pool gate alike:
/// `quota_exhausted` when a quota gate classified the request `overflow`,
/// else `gate_closed`.
pub(super) fn refusal_reason(labels: &std::collections::BTreeMap<String, String>) -> GateReason {
    if labels.get(CLASSIFICATION).map(String::as_str) == Some(OVERFLOW) {
        GateReason::QuotaExhausted
    } else {
        GateReason::GateClosed
    }
}

impl Consumer {
    /// The queue gate's budget, 1 with no gate; published as `dispatch_budget`.
    pub(super) async fn budget(&self) -> f64 {
        let Some(gate) = &self.gate else {
            return 1.0;
        };
        let budget = gate.budget().await;
        metrics::dispatch_budget(&self.queue, budget);
        budget
    }

    /// Puts each candidate through the queue gate (every candidate is kept
    /// when the queue has none). The queue's static labels are merged over
    /// the member's own first, so a producer cannot relabel its request
    /// past an operator's setting. Returns the candidates to claim, in peek
    /// order, and how many the gate left pending (refused, waiting or failed).
    pub(super) async fn admit(&self, candidates: Vec<Candidate>) -> (Vec<Candidate>, usize) {
        let (mut kept, mut held_back) = (Vec::new(), 0);
        let now_secs = (self.shared.clock.now().0 / 1000) as i64;
        let mut rest = candidates.into_iter();
        while let Some(mut candidate) = rest.next() {
            let Plan::Dispatch(parsed) = &mut candidate.plan else {
                kept.push(candidate);
                continue;
            };
            for (key, value) in &self.spec.labels {
                parsed.labels.insert(key.clone(), value.clone());
            }
            // Past its deadline, it is answered without a handler call.
            let gate = self.gate.as_ref().filter(|_| parsed.deadline > now_secs);
            let Some(gate) = gate else {
                kept.push(candidate);
                continue;
            };
            let mut releases = Releases::new();
            let mut request = GateRequest {
                id: &parsed.id,
                metadata: &parsed.metadata,
                labels: &mut parsed.labels,
            };
            let decided = tokio::select! {
                biased;
                () = self.stop.cancelled() => None,
                verdict = gate.apply(&mut request, &mut releases) => Some(verdict),
                () = tokio::time::sleep(self.shared.config.poll_interval) => None,
            };
            let Some(verdict) = decided else {
                if !self.stop.is_cancelled() {
                    metrics::gate_decision(&self.queue, GateReason::GateClosed);
                }
                tracing::debug!(queue = %self.spec.id, request = %candidate.generation, "queue gate undecided within a poll interval; the rest of the poll stays pending");
                releases.run().await;
                held_back += 1 + rest.len();
                break;
            };
            let refused = refusal_reason(request.labels);
            match verdict {
                Ok(Verdict::Continue) => {
                    candidate.releases = releases;
                    kept.push(candidate);
                }
                Ok(Verdict::Drop(record)) => {
                    // Counted as `dropped` when its record lands.
                    candidate.releases = releases;
                    if let Plan::Dispatch(parsed) =
                        std::mem::replace(&mut candidate.plan, Plan::Invalid(String::new()))
                    {
                        candidate.plan = Plan::Dropped(parsed, record);
                    }
                    kept.push(candidate);
                }
                Ok(Verdict::Refuse | Verdict::Wait) => {
                    metrics::gate_decision(&self.queue, refused);
                    releases.run().await;
                    held_back += 1;
                }
                Err(e) => {
                    metrics::gate_decision(&self.queue, GateReason::Error);
                    tracing::warn!(queue = %self.spec.id, request = %candidate.generation, error = %e, "queue gate failed; the request stays pending");
                    releases.run().await;
                    held_back += 1;
                }
            }
        }
        (kept, held_back)
    }
}
