//! The store error: what went wrong, and whether the operation may have happened anyway.

use crate::op::Op;

/// What a store call returns: its value, or a [`StoreError`] (the error
/// type can be named for other uses, as `std`'s).
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// An error from a store operation (of any of the store traits).
///
/// The variant tells the caller two things. Whether the operation may have
/// happened: only an `Indeterminate` one may (a timeout after the script
/// ran), so the caller must only repeat it if it is idempotent (ack, renew and
/// release are). And whether repeating it can help: `Failed`,
/// `Indeterminate` and `OutOfMemory` are transient (connection loss,
/// timeouts, a server loading, busy, failing over or full) and are retried
/// with capped backoff; `Rejected` and `InvalidInput` are permanent (the
/// same call fails the same way every time) and are never retried forever.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The operation definitely did not happen (connection refused, pool
    /// exhausted, the store rejected the request before running it).
    #[error("{op} failed and did not happen: {detail}")]
    Failed { op: Op, detail: String },
    /// The operation may or may not have happened.
    #[error("{op} may have happened; its outcome is unknown: {detail}")]
    Indeterminate { op: Op, detail: String },
    /// The store is out of memory (Redis `OOM` under `maxmemory`); nothing
    /// happened. Transient, but an operator must act: surfaced on readiness.
    #[error("{op} failed and did not happen: the store is out of memory: {detail}")]
    OutOfMemory { op: Op, detail: String },
    /// The store refused the whole call and will refuse it again (a key of
    /// the wrong type, a script error); nothing happened. Permanent.
    #[error("{op} was rejected by the store and did not happen: {detail}")]
    Rejected { op: Op, detail: String },
    /// The caller passed something the store cannot accept; nothing happened.
    #[error("{op} refused its input: {detail}")]
    InvalidInput { op: Op, detail: String },
}

/// Writes one constructor per variant: `StoreError::failed(op, detail)`.
macro_rules! constructors {
    ($($name:ident => $variant:ident),*) => {
        $( pub fn $name(op: Op, detail: impl Into<String>) -> Self {
            StoreError::$variant { op, detail: detail.into() }
        } )*
    };
}

impl StoreError {
    constructors!(
        failed => Failed,
        indeterminate => Indeterminate,
        out_of_memory => OutOfMemory,
        rejected => Rejected,
        invalid => InvalidInput
    );

    /// True when the operation may have taken effect despite the error.
    pub fn may_have_happened(&self) -> bool {
        matches!(self, StoreError::Indeterminate { .. })
    }

    /// True when repeating the call can succeed (connection loss, timeout,
    /// a loading, busy, failing-over or full server); false when the same
    /// call would fail the same way again.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            StoreError::Failed { .. }
                | StoreError::Indeterminate { .. }
                | StoreError::OutOfMemory { .. }
        )
    }

    /// True when the store is out of memory.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, StoreError::OutOfMemory { .. })
    }

    /// The operation this error belongs to.
    pub fn op(&self) -> Op {
        match self {
            StoreError::Failed { op, .. }
            | StoreError::Indeterminate { op, .. }
            | StoreError::OutOfMemory { op, .. }
            | StoreError::Rejected { op, .. }
            | StoreError::InvalidInput { op, .. } => *op,
        }
    }
}
