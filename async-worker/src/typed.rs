//! The typed handler: an application function from a deserialized job to a serializable answer, adapted to the raw [`Handler`].
//!
//! The adaptor owns the three ways a typed call can end, so the function
//! only says what it computes: a payload that does not deserialize into
//! the job type gets an `INVALID_REQUEST` record naming the serde error
//! (retrying cannot fix it), an `Ok` answer is serialized as JSON into the
//! success record (status 200), and an `Err` becomes an error record
//! (`INFERENCE_ERROR`, the error's `Display` as the message).

use crate::handler::{Handler, HandlerOutcome, Request};
use async_trait::async_trait;
use claim_core::Millis;
use claim_core::wire::ErrorCode;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Display;
use std::marker::PhantomData;
use tokio_util::sync::CancellationToken;

/// What a typed handler learns about its job besides the payload.
#[derive(Debug, Clone)]
pub struct JobContext {
    /// The request's id (the producer's `id`).
    pub id: String,
    /// The queue spec id it came from.
    pub queue_id: String,
    /// The request's deadline, in Unix milliseconds like [`Request::deadline`].
    pub deadline: Millis,
    /// Earlier deliveries that ended with an expired lease.
    pub redeliveries: u32,
    /// Fires when the runtime stops wanting the answer (see [`Handler`]).
    pub cancel: CancellationToken,
}

/// A [`Handler`] made of an async function from a job to an answer; build
/// it with [`handler_fn`].
pub struct HandlerFn<F, Job> {
    function: F,
    job: PhantomData<fn() -> Job>,
}

impl<F, Job> std::fmt::Debug for HandlerFn<F, Job> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerFn")
            .field("job", &std::any::type_name::<Job>())
            .finish()
    }
}

/// Adapts `function(job, context)` to a [`Handler`]: the payload is
/// deserialized into `Job`, the answer serialized into the success record.
///
/// ```
/// use async_worker::prelude::*;
///
/// #[derive(serde::Deserialize)]
/// struct Greet { name: String }
///
/// let handler = handler_fn(|job: Greet, _cx: JobContext| async move {
///     Ok::<_, std::convert::Infallible>(format!("hello, {}", job.name))
/// });
/// # let _ = handler;
/// ```
// Only the bounds that let the closure's argument and answer types be
// inferred; the rest is checked where the handler is used.
pub fn handler_fn<F, Fut, Job, Answer, Error>(function: F) -> HandlerFn<F, Job>
where
    F: Fn(Job, JobContext) -> Fut,
    Fut: Future<Output = Result<Answer, Error>>,
{
    HandlerFn {
        function,
        job: PhantomData,
    }
}

#[async_trait]
impl<F, Fut, Job, Answer, Error> Handler for HandlerFn<F, Job>
where
    F: Fn(Job, JobContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Answer, Error>> + Send,
    Job: DeserializeOwned + Send + 'static,
    Answer: Serialize,
    Error: Display,
{
    async fn handle(&self, request: &Request, cancel: CancellationToken) -> HandlerOutcome {
        let job: Job = match serde_json::from_str(request.parsed.payload.get()) {
            Ok(job) => job,
            Err(e) => {
                let expected = std::any::type_name::<Job>();
                let message = format!("payload does not match {expected}: {e}");
                return HandlerOutcome::error(ErrorCode::InvalidRequest, message);
            }
        };
        let context = JobContext {
            id: request.generation.id.clone(),
            queue_id: request.queue_id.clone(),
            deadline: request.deadline,
            redeliveries: request.redeliveries,
            cancel,
        };
        match (self.function)(job, context).await {
            Ok(answer) => match serde_json::to_string(&answer) {
                Ok(body) => HandlerOutcome::Success { status: 200, body },
                Err(e) => {
                    let message = format!("the answer does not serialize: {e}");
                    HandlerOutcome::error(ErrorCode::InferenceError, message)
                }
            },
            Err(e) => HandlerOutcome::error(ErrorCode::InferenceError, e.to_string()),
        }
    }
}

#[cfg(test)]
#[path = "typed_tests.rs"]
mod tests;
