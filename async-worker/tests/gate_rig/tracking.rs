//! The gate tests' handler: it answers each request after a set time and notes every call and the most calls of each queue that ran at once.

use async_trait::async_trait;
use async_worker::{Handler, HandlerOutcome, Request};
use claim_core::wire::ErrorCode;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// One handler call: which request, from which queue, at which retry count.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub id: String,
    pub queue_name: String,
    pub retry_count: u32,
}

/// Answers `answer to <id>` after holding each request for `hold` (until
/// stopped, when stopped first), noting every call and the most calls of
/// each queue that ran at once.
#[derive(Debug, Default)]
pub struct Tracking {
    hold: Duration,
    calls: Mutex<Vec<Call>>,
    /// Per queue: calls running now, and the most that ever ran at once.
    running: Mutex<HashMap<String, (usize, usize)>>,
    /// What its check refuses every request with, when set.
    refusal: Option<&'static str>,
}

impl Tracking {
    pub fn holding(hold: Duration) -> Arc<Tracking> {
        Arc::new(Tracking {
            hold,
            ..Tracking::default()
        })
    }

    /// A handler whose check refuses every request `INVALID_REQUEST` with
    /// `message` (as a failed transform validation does).
    pub fn refusing(message: &'static str) -> Arc<Tracking> {
        Arc::new(Tracking {
            refusal: Some(message),
            ..Tracking::default()
        })
    }

    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    /// The most calls of `queue` that ran at once.
    pub fn most_at_once(&self, queue: &str) -> usize {
        let running = self.running.lock().unwrap();
        running.get(queue).map_or(0, |(_, most)| *most)
    }

    fn enter(&self, queue: &str) {
        let mut running = self.running.lock().unwrap();
        let (now, most) = running.entry(queue.to_owned()).or_default();
        *now += 1;
        *most = (*most).max(*now);
    }

    fn leave(&self, queue: &str) {
        let mut running = self.running.lock().unwrap();
        if let Some((now, _)) = running.get_mut(queue) {
            *now -= 1;
        }
    }
}

#[async_trait]
impl Handler for Tracking {
    fn check(&self, _request: &Request) -> Result<(), (ErrorCode, String)> {
        match self.refusal {
            Some(message) => Err((ErrorCode::InvalidRequest, message.to_owned())),
            None => Ok(()),
        }
    }

    async fn handle(&self, request: &Request, cancel: CancellationToken) -> HandlerOutcome {
        let id = request.generation.id.clone();
        self.calls.lock().unwrap().push(Call {
            id: id.clone(),
            queue_name: request.queue_name.clone(),
            retry_count: request.parsed.retry_count,
        });
        self.enter(&request.queue_name);
        tokio::select! {
            () = tokio::time::sleep(self.hold) => {}
            () = cancel.cancelled() => {}
        }
        self.leave(&request.queue_name);
        HandlerOutcome::Success {
            status: 200,
            body: format!("answer to {id}"),
        }
    }
}
