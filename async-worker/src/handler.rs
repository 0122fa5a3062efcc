//! The application's code: what the runtime calls for each claimed request.

use async_trait::async_trait;
use claim_core::wire::{ErrorCode, ParsedMember};
use claim_core::{Generation, Member, Millis, Score};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// One claimed request handed to a [`Handler`].
#[derive(Debug, Clone)]
pub struct Request {
    /// The queue spec id it came from.
    pub queue_id: String,
    /// The pending sorted set it came from.
    pub queue_name: String,
    pub generation: Generation,
    /// The member exactly as stored (`"payload":null` when the payload is
    /// stored apart).
    pub member: Member,
    /// Its pending score as claimed (the ack names it).
    pub score: Score,
    /// The fields parsed from it. `parsed.payload` is the request's payload:
    /// the member's own, or the one fetched from `parsed.payload_ref`.
    /// `parsed.deadline` is the wire's copy, in whole Unix seconds as the
    /// producer wrote it; read [`Request::deadline`] instead.
    pub parsed: ParsedMember,
    /// The request's deadline in Unix milliseconds: the one deadline the
    /// runtime bounds handling, retries and records by (its clock reads
    /// milliseconds), derived once at claim from `parsed.deadline`.
    pub deadline: Millis,
    /// Earlier deliveries that ended with an expired lease.
    pub redeliveries: u32,
}

/// What handling a request came to.
#[derive(Debug, Clone, PartialEq)]
pub enum HandlerOutcome {
    /// The gateway answered: a record with its status and body.
    Success { status: u16, body: String },
    /// A terminal failure: a record with an error code. `status` is the HTTP
    /// status when the gateway answered with an error.
    Error {
        code: ErrorCode,
        message: String,
        status: Option<u16>,
    },
    /// A transient failure: park the request and try again after `after`
    /// (never past its deadline; the runtime turns a retry that cannot happen
    /// in time into `DEADLINE_EXCEEDED`).
    Retry { after: Duration, reason: String },
}

impl HandlerOutcome {
    pub fn error(code: ErrorCode, message: impl Into<String>) -> Self {
        HandlerOutcome::Error {
            code,
            message: message.into(),
            status: None,
        }
    }

    /// The record of a request its producer cancelled.
    pub(crate) fn cancelled() -> Self {
        HandlerOutcome::error(ErrorCode::Cancelled, CANCELLED_MESSAGE)
    }
}

/// Go's `error_message` of a `CANCELLED` record, which its consumers (and
/// upstream's e2e tests) compare exactly.
pub(crate) const CANCELLED_MESSAGE: &str = "cancelled";

/// The application's request handler.
///
/// `cancel` fires when the runtime stops wanting the answer: the lease was
/// lost, the producer cancelled the request, or shutdown ran out of drain
/// time. A handler should return promptly when it fires; whatever it returns
/// then is still offered to ack if the request was not cancelled.
#[async_trait]
pub trait Handler: Send + Sync + 'static {
    async fn handle(&self, request: &Request, cancel: CancellationToken) -> HandlerOutcome;

    /// Checks a claimed request before it waits for its pool's gate, as
    /// Go validates transforms there: a request that can never be sent
    /// gets its terminal record at once (this code and message) instead of
    /// holding a gate's slot. Default: nothing to check.
    fn check(&self, _request: &Request) -> Result<(), (ErrorCode, String)> {
        Ok(())
    }
}

/// A shared handler is a handler (the builder takes `Arc<dyn Handler>` too).
#[async_trait]
impl<H: Handler + ?Sized> Handler for std::sync::Arc<H> {
    async fn handle(&self, request: &Request, cancel: CancellationToken) -> HandlerOutcome {
        (**self).handle(request, cancel).await
    }

    fn check(&self, request: &Request) -> Result<(), (ErrorCode, String)> {
        (**self).check(request)
    }
}
