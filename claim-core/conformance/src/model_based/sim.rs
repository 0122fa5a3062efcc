//! The recorder every transition runs through: each store call is made on the model and logged with its answer.

use super::calls::{Answer, Batch, Call, Entry, on_model};
use super::oracle;
use super::state::{Held, RefState, tag};
use super::workload::Verdict;
use claim_core::store::{
    AckItem, AckOutcome, ClaimOutcome, ClaimRequest, PendingEntry, ReclaimReport, RenewOutcome,
    StoreConfig, Submission,
};
use claim_core::types::{Generation, Member, OwnerToken};
use claim_core::wire::{self, ErrorCode, ResultRecord};

/// The reference state plus the calls made on it so far.
#[derive(Debug)]
pub struct Sim {
    pub state: RefState,
    pub trace: Vec<Entry>,
}

macro_rules! answer {
    ($sim:expr, $call:expr, $variant:ident) => {
        match $sim.call($call) {
            Answer::$variant(v) => v,
            other => unreachable!("the model answered {other:?}"),
        }
    };
}

impl Sim {
    pub fn new(state: RefState) -> Self {
        Sim {
            state,
            trace: Vec::new(),
        }
    }

    pub fn call(&mut self, call: Call) -> Answer {
        let now = self.state.now;
        let before = self.state.model.clone();
        let answer = on_model(&mut self.state.model, &call, now);
        if self.state.violation.is_none() {
            self.state.violation = oracle::check(&before, &self.state.model, &call, &answer, now);
        }
        self.trace.push(Entry {
            now,
            call,
            answer: answer.clone(),
        });
        answer
    }

    pub fn submit(&mut self, queue: &str, submission: Submission) {
        self.call(Call::Submit {
            queue: queue.to_owned(),
            submission,
        });
    }

    pub fn peek(&mut self, queue: &str, offset: usize, limit: usize) -> Vec<PendingEntry> {
        answer!(
            self,
            Call::Peek {
                queue: queue.to_owned(),
                offset,
                limit
            },
            Pending
        )
    }

    pub fn promote(&mut self, limit: usize) -> usize {
        answer!(self, Call::PromoteDue { limit }, Moved)
    }

    pub fn renew(
        &mut self,
        queue: &str,
        owner: &OwnerToken,
        generations: Vec<Generation>,
    ) -> Vec<RenewOutcome> {
        answer!(
            self,
            Call::Renew(Batch::new(queue, owner, generations)),
            Renewed
        )
    }

    pub fn reclaim(&mut self, queue: &str, limit: usize) -> ReclaimReport {
        answer!(
            self,
            Call::ReclaimExpired {
                queue: queue.to_owned(),
                limit
            },
            Reclaimed
        )
    }

    pub fn ack(&mut self, queue: &str, owner: &OwnerToken, items: Vec<AckItem>) -> Vec<AckOutcome> {
        answer!(self, Call::Ack(Batch::new(queue, owner, items)), Acked)
    }

    /// Claims members seen pending, as a worker does: an unparsable one goes
    /// to the dead set with the parse error as its reason. Returns what was claimed.
    pub fn claim_members(
        &mut self,
        queue: &str,
        owner: &OwnerToken,
        members: Vec<Member>,
    ) -> Vec<(Generation, Held)> {
        let mut items = Vec::new();
        for member in members {
            match wire::parse_member(member.as_bytes()) {
                Ok(p) => items.push(ClaimRequest {
                    member,
                    generation: Generation::new(p.id, p.token),
                }),
                Err(e) => {
                    let reason = e.to_string();
                    self.call(Call::DeadLetter {
                        queue: queue.to_owned(),
                        member,
                        reason,
                    });
                }
            }
        }
        if items.is_empty() {
            return Vec::new();
        }
        let call = Call::Claim(Batch::new(queue, owner, items.clone()));
        let outcomes = answer!(self, call, Claimed);
        items
            .into_iter()
            .zip(outcomes)
            .filter_map(|(item, outcome)| match outcome {
                ClaimOutcome::Claimed {
                    cancelled, score, ..
                } => {
                    let held = Held {
                        queue: queue.to_owned(),
                        member: item.member,
                        score,
                        cancelled,
                    };
                    Some((item.generation, held))
                }
                ClaimOutcome::NotPending
                | ClaimOutcome::DuplicateDropped
                | ClaimOutcome::DeadLettered => None,
            })
            .collect()
    }
}

/// The record a worker writes for a generation it worked on.
pub fn ack_item(
    g: &Generation,
    held: &Held,
    owner: &OwnerToken,
    verdict: Verdict,
    config: &StoreConfig,
) -> AckItem {
    let parsed = wire::parse_member(held.member.as_bytes()).ok();
    let route = config.route(&held.queue, parsed.as_ref());
    let verdict = if held.cancelled {
        Verdict::Error(ErrorCode::Cancelled)
    } else {
        verdict
    };
    let record = match verdict {
        Verdict::Success => {
            ResultRecord::success(&g.id, 200, format!("done by {owner} {}", tag(g)))
        }
        Verdict::Error(code) => {
            ResultRecord::error(&g.id, code, format!("{code} at {owner} {}", tag(g)))
        }
    };
    AckItem {
        generation: g.clone(),
        member: held.member.clone(),
        score: held.score,
        result_ttl_seconds: route.ttl_or_zero(),
        result_list: route.list,
        record: record.to_json_bytes().into(),
        payload_ref: None,
    }
}
