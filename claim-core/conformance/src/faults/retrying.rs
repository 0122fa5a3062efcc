//! A careful client as a `ClaimStore`: retries failed calls and reconciles indeterminate ones by inspecting the store.
//!
//! [`Retrying`] wraps a store whose calls may fail (normally an
//! [`UnreliableStore`](super::unreliable::UnreliableStore)) and answers as if
//! no call had failed:
//!
//! - a **determinate** failure (the call did not happen) is retried;
//! - an **indeterminate** failure of an idempotent operation (submit, cancel,
//!   renew, every read) is retried: doing it twice is doing it once;
//! - an **indeterminate** failure of an operation whose answer says what it
//!   changed (claim, ack, release, park, promote, reclaim,
//!   dead-letter, enqueue) is reconciled: the store is inspected before the call and
//!   again after the failure; if the inspection shows the call took effect,
//!   the answer is rebuilt from what changed, otherwise the call is retried.
//!
//! This is how the worker treats errors (the result writer retries acks and
//! parks until the store answers) made exact, so that a workload run through
//! faults must leave the store exactly as it would have without them. The
//! reconciliation reads the store between calls, so its rebuilt answers are
//! exact for one caller at a time; concurrent callers still never see a claim
//! they do not hold reported as theirs.
//!
//! The worker's runtime does not reconcile claims: an indeterminate claim is
//! left to lapse and be reclaimed. That policy is exercised by
//! async-worker's runtime model test, not here.

use claim_core::error::StoreError;
use claim_core::store::ClaimStore;
use claim_core::{ClaimProducer, ListReads};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};

mod reconcile;

/// Calls given up after this many failures in a row (the store is down).
const MAX_ATTEMPTS: usize = 10_000;

/// What the retrying client did, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RetryStats {
    /// Calls repeated after a failure.
    pub retried: usize,
    /// Indeterminate calls whose answer was rebuilt from the store's state.
    pub reconciled: usize,
}

/// Wraps a failing store and hides its failures. See the module docs.
#[derive(Debug)]
pub struct Retrying<S> {
    inner: S,
    retried: AtomicUsize,
    reconciled: AtomicUsize,
}

/// How one attempt of a reconciled call ended.
enum Attempt<T> {
    Done(T),
    Again,
}

impl<T> Attempt<T> {
    /// `Done(answer())` if the call took effect, else `Again`.
    fn done_if(took_effect: bool, answer: impl FnOnce() -> T) -> Self {
        if took_effect {
            Attempt::Done(answer())
        } else {
            Attempt::Again
        }
    }
}

impl<S: ClaimStore + ClaimProducer + ListReads> Retrying<S> {
    pub fn new(inner: S) -> Self {
        Retrying {
            inner,
            retried: AtomicUsize::new(0),
            reconciled: AtomicUsize::new(0),
        }
    }

    pub fn inner(&self) -> &S {
        &self.inner
    }

    pub fn stats(&self) -> RetryStats {
        RetryStats {
            retried: self.retried.load(Ordering::Relaxed),
            reconciled: self.reconciled.load(Ordering::Relaxed),
        }
    }

    /// Repeats an idempotent call until it answers (or fails permanently:
    /// a refused input or a rejected call fails the same way again).
    async fn again<T, F, Fut>(&self, mut call: F) -> Result<T, StoreError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, StoreError>>,
    {
        let mut attempts = 0;
        loop {
            match call().await {
                Ok(answer) => return Ok(answer),
                Err(e) if !e.is_transient() => return Err(e),
                Err(e) if attempts + 1 >= MAX_ATTEMPTS => return Err(e),
                Err(_) => {
                    attempts += 1;
                    self.retried.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Makes a call whose indeterminate failure `reconcile` resolves: it
    /// rebuilds the answer when the store shows the call took effect
    /// (`Done`), or asks for another attempt (`Again`).
    async fn reconciled<T, F, Fut, R, RFut>(
        &self,
        mut call: F,
        mut reconcile: R,
    ) -> Result<T, StoreError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, StoreError>>,
        R: FnMut() -> RFut,
        RFut: Future<Output = Result<Attempt<T>, StoreError>>,
    {
        let mut attempts = 0;
        loop {
            let error = match call().await {
                Ok(answer) => return Ok(answer),
                Err(e @ StoreError::InvalidInput { .. }) => return Err(e),
                Err(e) => e,
            };
            if error.may_have_happened()
                && let Attempt::Done(answer) = reconcile().await?
            {
                self.reconciled.fetch_add(1, Ordering::Relaxed);
                return Ok(answer);
            }
            attempts += 1;
            if attempts >= MAX_ATTEMPTS {
                return Err(error);
            }
            self.retried.fetch_add(1, Ordering::Relaxed);
        }
    }
}
