//! `ClaimProducer`: what a producer asks of a store (submit, enqueue, cancel), and `push`, the shortest way to enqueue one job.
//!
//! The worker runtime never makes these calls; a producer (the Go producer,
//! an application, the demo, tests) does. So they live in a trait of their
//! own beside [`crate::ClaimStore`], and code that only works off a queue
//! cannot enqueue by accident.

use crate::error::Result;
use crate::store::Submission;
use crate::types::{Generation, Member};
use crate::wire::Envelope;
use async_trait::async_trait;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// Producer operations on a store. See the module docs.
#[async_trait]
pub trait ClaimProducer: Send + Sync + std::fmt::Debug + 'static {
    /// Enqueues the member bytes as given, atomically: clears the id's cancel
    /// marker, marks this token active until the deadline, stores
    /// [`Submission::payload`] when present (until the deadline plus
    /// [`crate::wire::PAYLOAD_GRACE_MS`]), adds the member at
    /// [`Submission::score`]. Tests that need exact bytes use this;
    /// producers use [`Self::enqueue`].
    async fn submit(&self, queue: &str, submission: &Submission) -> Result<()>;

    /// Enqueues as the Go producer does, in one atomic step: `INCR`s
    /// `request-seq:<queue>:<deadline>` (expiring an hour after the
    /// deadline), stamps the count into the member's `internal.enqueue_seq`
    /// ([`crate::wire::seq_template`]), then does what [`Self::submit`] does,
    /// at score [`crate::wire::queue_score`]`(deadline, seq)`. Returns the
    /// member as enqueued. `InvalidInput` when the member is not a JSON
    /// object (or its `internal` is not one); nothing happened then.
    async fn enqueue(&self, queue: &str, submission: &Submission) -> Result<Member>;

    /// Cancels as the Go producer does: the active token becomes the cancel
    /// marker. False when the id has no active generation.
    async fn cancel(&self, id: &str) -> Result<bool>;

    /// Enqueues one job ([`Self::enqueue`]): `payload` under request `id`,
    /// due by `deadline` (Unix seconds), in a member shaped as the Go
    /// producer shapes it, naming `queue` and under a fresh request token
    /// ([`fresh_request_token`]). Its result list is left to the store's
    /// routing (the queue's configured list, else the default). Returns the
    /// job's generation: its id and that token, what a later
    /// [`Self::cancel`] or result record names.
    async fn push(
        &self,
        queue: &str,
        id: &str,
        payload: serde_json::Value,
        deadline: i64,
    ) -> Result<Generation> {
        let mut envelope = Envelope::new(id, fresh_request_token(), deadline, payload);
        envelope.internal.request_queue_name = queue.to_owned();
        // Empty: no list of the member's own, so the store's configuration
        // routes its records.
        envelope.internal.result_queue_name = String::new();
        let submission = envelope.submission();
        self.enqueue(queue, &submission).await?;
        Ok(submission.generation)
    }
}

/// A request token no other push of any process is expected to draw: 128
/// bits as 32 hex digits.
///
/// claim-core takes no random-number crate, so the bits come from the
/// standard library's hasher seeds: each [`RandomState`] is keyed from
/// randomness the operating system gave the thread, and hashing a
/// process-wide counter (two hashers, 64 bits each) makes every call of
/// one process distinct. Unpredictable enough to keep producers apart;
/// not a secret.
pub fn fresh_request_token() -> String {
    static DRAWN: AtomicU64 = AtomicU64::new(0);
    let draw = DRAWN.fetch_add(1, Ordering::Relaxed);
    let half = |lane: u64| {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(draw);
        hasher.write_u64(lane);
        hasher.finish()
    };
    format!("{:016x}{:016x}", half(0), half(1))
}

#[cfg(test)]
mod tests {
    use super::fresh_request_token;

    #[test]
    fn fresh_request_tokens_are_32_hex_digits_and_never_repeat() {
        let tokens: std::collections::BTreeSet<String> =
            (0..10_000).map(|_| fresh_request_token()).collect();
        assert_eq!(tokens.len(), 10_000);
        assert!(
            tokens
                .iter()
                .all(|t| t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit()))
        );
    }
}
