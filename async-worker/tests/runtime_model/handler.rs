//! The scripted handler: one act per delivery, chosen by the test.

use super::gates::GateBook;
use super::reference::{Act, Verdict};
use async_trait::async_trait;
use async_worker::{Handler, HandlerOutcome, Request};
use claim_core::wire::ErrorCode;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// One request's script and its deliveries so far.
#[derive(Debug)]
struct Script {
    acts: Vec<Act>,
    deliveries: AtomicUsize,
    /// One permit per unblock the test gave.
    unblocked: Semaphore,
}

/// What a delivery of a request came to, as the handler returned it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Returned {
    Answered(Verdict),
    /// It returned because the runtime cancelled it.
    Stopped,
}

/// The handler every replica shares.
#[derive(Debug, Default)]
pub struct Scripted {
    scripts: Mutex<BTreeMap<String, Arc<Script>>>,
    /// (request id, delivery number) → what that delivery returned.
    returned: Mutex<BTreeMap<(String, usize), Returned>>,
    /// Handler delays are divided by this (real time runs them faster).
    pub slowdown_divisor: u32,
    /// The gates, told of every call: the pool gate must have let it through.
    gates: Arc<GateBook>,
}

impl Scripted {
    pub fn new(slowdown_divisor: u32, gates: Arc<GateBook>) -> Self {
        Scripted {
            slowdown_divisor,
            gates,
            ..Scripted::default()
        }
    }

    pub fn script(&self, id: &str, acts: Vec<Act>) {
        let script = Script {
            acts,
            deliveries: AtomicUsize::new(0),
            unblocked: Semaphore::new(0),
        };
        self.scripts
            .lock()
            .unwrap()
            .insert(id.to_owned(), Arc::new(script));
    }

    /// Lets `n` blocked deliveries of `id` answer (now or when they come).
    pub fn unblock(&self, id: &str, n: usize) {
        if let Some(s) = self.scripts.lock().unwrap().get(id) {
            s.unblocked.add_permits(n);
        }
    }

    pub fn unblock_all(&self) {
        for s in self.scripts.lock().unwrap().values() {
            s.unblocked.add_permits(1_000);
        }
    }

    /// What delivery `n` of `id` returned, if it returned.
    pub fn returned(&self, id: &str, n: usize) -> Option<Returned> {
        self.returned
            .lock()
            .unwrap()
            .get(&(id.to_owned(), n))
            .copied()
    }

    /// Whether some delivery of `id` returned what `pred` asks for.
    pub fn ever(&self, id: &str, pred: impl Fn(Returned) -> bool) -> bool {
        self.times(id, pred) > 0
    }

    /// How many deliveries of `id` returned what `pred` asks for.
    pub fn times(&self, id: &str, pred: impl Fn(Returned) -> bool) -> usize {
        self.returned
            .lock()
            .unwrap()
            .iter()
            .filter(|((i, _), r)| i == id && pred(**r))
            .count()
    }

    /// Deliveries the runtime cancelled before they answered.
    pub fn stopped(&self) -> usize {
        self.returned
            .lock()
            .unwrap()
            .values()
            .filter(|r| **r == Returned::Stopped)
            .count()
    }

    pub fn deliveries(&self, id: &str) -> usize {
        self.scripts
            .lock()
            .unwrap()
            .get(id)
            .map_or(0, |s| s.deliveries.load(Ordering::SeqCst))
    }

    fn delay(&self, ms: u32) -> Duration {
        Duration::from_millis(u64::from(ms / self.slowdown_divisor.max(1)))
    }
}

/// The success body of delivery `n` of `id`.
pub fn success_body(id: &str, n: usize) -> String {
    format!("answer to {id} delivery {n}")
}

/// The error message of delivery `n` of `id`.
pub fn error_message(id: &str, n: usize) -> String {
    format!("{id} failed on delivery {n}")
}

#[async_trait]
impl Handler for Scripted {
    async fn handle(&self, request: &Request, cancel: CancellationToken) -> HandlerOutcome {
        let id = request.generation.id.clone();
        self.gates.sent(&id);
        let script = self.scripts.lock().unwrap().get(&id).cloned();
        let (n, act) = match &script {
            Some(s) => {
                let n = s.deliveries.fetch_add(1, Ordering::SeqCst);
                let act = s.acts.get(n).copied();
                (n, act)
            }
            None => (0, None),
        };
        let act = act.unwrap_or(Act::Answer {
            verdict: Verdict::Success,
            delay_ms: 0,
        });
        let mut abandoned = Abandoned(self, Some((id.clone(), n)));
        let answered = match (act, &script) {
            (Act::Answer { verdict, delay_ms }, _) => tokio::select! {
                () = tokio::time::sleep(self.delay(delay_ms)) => Some(verdict),
                () = cancel.cancelled() => None,
            },
            (Act::Block { verdict }, Some(s)) => tokio::select! {
                permit = s.unblocked.acquire() => {
                    permit.expect("never closed").forget();
                    Some(verdict)
                }
                () = cancel.cancelled() => None,
            },
            (Act::Hang, _) | (Act::Block { .. }, None) => {
                cancel.cancelled().await;
                None
            }
        };
        abandoned.1 = None;
        let returned = answered.map_or(Returned::Stopped, Returned::Answered);
        self.returned
            .lock()
            .unwrap()
            .insert((id.clone(), n), returned);
        match answered {
            Some(Verdict::Success) => HandlerOutcome::Success {
                status: 200,
                body: success_body(&id, n),
            },
            Some(Verdict::Error) => HandlerOutcome::Error {
                code: ErrorCode::InferenceError,
                message: error_message(&id, n),
                status: Some(500),
            },
            Some(Verdict::Retry { after_ms }) => HandlerOutcome::Retry {
                after: Duration::from_millis(u64::from(after_ms)),
                reason: format!("{id} asked for a retry on delivery {n}"),
            },
            // Whatever a cancelled handler returns must never become a record.
            None => HandlerOutcome::error(ErrorCode::InferenceError, format!("STOPPED {id} {n}")),
        }
    }
}

/// Notes a delivery whose future the runtime dropped before it answered
/// (it stopped wanting the answer) as stopped.
struct Abandoned<'a>(&'a Scripted, Option<(String, usize)>);

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.1.take() {
            self.0
                .returned
                .lock()
                .unwrap()
                .insert(key, Returned::Stopped);
        }
    }
}
