//! The gates every replica consults: the queue gate (a budget the test switches, then each request's scripted answer) and the pool gate (each request's scripted answer), with a log of every answer and a ledger of every reservation and its release.

use super::reference::{GateAct, GateAt, GateMode, GateScripts};
use async_trait::async_trait;
use async_worker::DispatchGate;
use async_worker::gate::{GateError, GateRecord, GateRequest, Release, Releases, Verdict};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

/// One answer a gate gave for a request: which gate, its call number for
/// that request (over every replica), and what it answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub at: GateAt,
    pub call: usize,
    pub act: GateAct,
}

/// What one gate call reserved: every call reserves, whatever it answers,
/// so every exit path of a request must run a release.
#[derive(Debug)]
struct Reservation {
    /// The replica that asked (its start number).
    replica: usize,
    id: String,
    at: GateAt,
    act: GateAct,
    /// How often its release ran.
    runs: usize,
}

/// What every replica's gates share with the test.
#[derive(Debug, Default)]
pub struct GateBook {
    /// The queue gate's budget, a [`GateMode`].
    mode: AtomicU8,
    /// Per request and gate: the answers still to give, one per call.
    scripts: Mutex<BTreeMap<(String, GateAt), VecDeque<GateAct>>>,
    /// Per request: every answer given, in order.
    answers: Mutex<BTreeMap<String, Vec<Answer>>>,
    reservations: Mutex<Vec<Reservation>>,
    /// The first verdict the runtime did not follow.
    violation: Mutex<Option<String>>,
}

/// The payload of the record a gate drops request `id` with, its own.
pub fn gate_payload(id: &str) -> String {
    serde_json::json!({"dropped_by_gate": id}).to_string()
}

/// The error a gate fails with on call `call` for request `id`.
pub fn gate_failure(id: &str, call: usize) -> String {
    format!("gate failed for {id} on call {call}")
}

impl GateBook {
    pub fn set(&self, mode: GateMode) {
        self.mode.store(mode as u8, Ordering::SeqCst);
    }

    fn mode(&self) -> GateMode {
        match self.mode.load(Ordering::SeqCst) {
            x if x == GateMode::Partial as u8 => GateMode::Partial,
            x if x == GateMode::Closed as u8 => GateMode::Closed,
            x if x == GateMode::Failing as u8 => GateMode::Failing,
            _ => GateMode::Open,
        }
    }

    /// What the gates answer for request `id` (a `Wait { times }` on that
    /// many calls in a row).
    pub fn script(&self, id: &str, gates: &GateScripts) {
        let mut scripts = self.scripts.lock().unwrap();
        for (at, acts) in [(GateAt::Queue, &gates.queue), (GateAt::Pool, &gates.pool)] {
            let calls = acts.iter().flat_map(|act| match act {
                GateAct::Wait { times } => vec![*act; usize::from(*times)],
                _ => vec![*act],
            });
            scripts.insert((id.to_owned(), at), calls.collect());
        }
    }

    /// The next answer of gate `at` for `id` (`Continue` once its script is done).
    fn answer(&self, id: &str, at: GateAt) -> Answer {
        let act = self
            .scripts
            .lock()
            .unwrap()
            .get_mut(&(id.to_owned(), at))
            .and_then(VecDeque::pop_front)
            .unwrap_or(GateAct::Continue);
        let mut answers = self.answers.lock().unwrap();
        let given = answers.entry(id.to_owned()).or_default();
        let call = given.iter().filter(|a| a.at == at).count();
        let answer = Answer { at, call, act };
        given.push(answer);
        answer
    }

    /// A reservation for this answer, and the release that undoes it.
    fn reserve(self: &Arc<Self>, replica: usize, id: &str, answer: Answer) -> Release {
        let mut reservations = self.reservations.lock().unwrap();
        let index = reservations.len();
        reservations.push(Reservation {
            replica,
            id: id.to_owned(),
            at: answer.at,
            act: answer.act,
            runs: 0,
        });
        let book = self.clone();
        Box::new(move || {
            Box::pin(async move {
                book.reservations.lock().unwrap()[index].runs += 1;
            })
        })
    }

    /// Notes a handler call for `id`: the pool gate's latest answer for it
    /// must be the `Continue` that let this call through (a worker calls
    /// the handler in the same turn as its gate answers, so no other
    /// replica's answer can come between).
    pub fn sent(&self, id: &str) {
        let answers = self.answers.lock().unwrap();
        let last = answers
            .get(id)
            .and_then(|given| given.iter().rev().find(|a| a.at == GateAt::Pool));
        if last.is_none_or(|a| a.act != GateAct::Continue) {
            let why = format!("{id} sent to the handler after the pool gate answered {last:?}");
            self.violation.lock().unwrap().get_or_insert(why);
        }
    }

    /// The first verdict the runtime did not follow.
    pub fn violation(&self) -> Option<String> {
        self.violation.lock().unwrap().clone()
    }

    /// Whether some gate answered `id` as `pred` asks.
    pub fn answered(&self, id: &str, pred: impl Fn(&Answer) -> bool) -> bool {
        self.answers
            .lock()
            .unwrap()
            .get(id)
            .is_some_and(|given| given.iter().any(pred))
    }

    /// The first reservation whose release ran twice, or (for a replica in
    /// `gone`) never: a replica's work is over once it is gone, so every
    /// release of its reservations must have run.
    pub fn misreleased(&self, gone: impl Fn(usize) -> bool) -> Option<String> {
        let reservations = self.reservations.lock().unwrap();
        let bad = reservations
            .iter()
            .find(|r| r.runs > 1 || (r.runs == 0 && gone(r.replica)))?;
        Some(format!(
            "the release of what the {:?} gate of replica #{} reserved for {} ({:?}) ran {} times",
            bad.at, bad.replica, bad.id, bad.act, bad.runs
        ))
    }

    /// Answers given, by gate and verdict, reservations made and releases
    /// run (for reports).
    pub fn tally(&self) -> (BTreeMap<String, usize>, usize, usize) {
        let mut by_kind = BTreeMap::new();
        for answer in self.answers.lock().unwrap().values().flatten() {
            let act = match answer.act {
                GateAct::Wait { .. } => "Wait".to_owned(),
                act => format!("{act:?}"),
            };
            *by_kind.entry(format!("{:?} {act}", answer.at)).or_default() += 1;
        }
        let reservations = self.reservations.lock().unwrap();
        let released = reservations.iter().map(|r| r.runs).sum();
        (by_kind, reservations.len(), released)
    }
}

/// The verdict (or error) an answer stands for.
fn verdict(id: &str, answer: Answer) -> Result<Verdict, GateError> {
    Ok(match answer.act {
        GateAct::Continue => Verdict::Continue,
        GateAct::Drop { own: false } => Verdict::Drop(None),
        GateAct::Drop { own: true } => Verdict::Drop(Some(GateRecord {
            payload: gate_payload(id),
        })),
        GateAct::Refuse => Verdict::Refuse,
        GateAct::Wait { .. } => Verdict::Wait,
        GateAct::Fail => return Err(GateError::Failed(gate_failure(id, answer.call))),
        GateAct::Hang => unreachable!("a hanging call never answers"),
    })
}

/// What one replica's queue gate decided in its current poll (a poll starts
/// by reading the budget), for its tap to hold the poll's store calls against.
#[derive(Debug, Default)]
pub struct PollWatch {
    /// The budget closed the poll: no peek, no claim.
    closed: AtomicBool,
    /// Members the gate refused, told to wait or failed on: not claimed.
    held_back: Mutex<BTreeSet<String>>,
}

impl PollWatch {
    pub fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    pub fn held_back(&self, id: &str) -> bool {
        self.held_back.lock().unwrap().contains(id)
    }
}

/// One replica's gate: its queue gate or its pool gate.
#[derive(Debug)]
pub struct ReplicaGate {
    pub book: Arc<GateBook>,
    pub at: GateAt,
    /// The replica's start number.
    pub replica: usize,
    /// The queue gate's poll, for the tap.
    pub poll: Arc<PollWatch>,
}

#[async_trait]
impl DispatchGate for ReplicaGate {
    /// The budget a poll reads: a failing backend answers 0, as a metric
    /// gate falls back to closed. The pool gate's budget is never read.
    async fn budget(&self) -> f64 {
        let budget = match self.book.mode() {
            GateMode::Open => 1.0,
            GateMode::Partial => 0.34,
            GateMode::Closed | GateMode::Failing => 0.0,
        };
        if self.at == GateAt::Queue {
            self.poll.closed.store(budget == 0.0, Ordering::SeqCst);
            self.poll.held_back.lock().unwrap().clear();
        }
        budget
    }

    async fn apply(
        &self,
        request: &mut GateRequest<'_>,
        releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        let answer = self.book.answer(request.id, self.at);
        releases.push(self.book.reserve(self.replica, request.id, answer));
        let holds = matches!(
            answer.act,
            GateAct::Refuse | GateAct::Wait { .. } | GateAct::Fail | GateAct::Hang
        );
        if self.at == GateAt::Queue && holds {
            let mut held_back = self.poll.held_back.lock().unwrap();
            held_back.insert(request.id.to_owned());
        }
        if answer.act == GateAct::Hang {
            // Dropped by the runtime when it stops waiting, releases pushed.
            std::future::pending::<()>().await;
        }
        verdict(request.id, answer)
    }
}
