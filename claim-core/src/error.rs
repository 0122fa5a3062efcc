//! The store error: what went wrong, and whether the operation may have happened anyway.

/// An error from a [`crate::ClaimStore`] operation.
///
/// The variant tells the caller what it may assume: a `Failed` operation
/// definitely did not happen and may be retried freely; an `Indeterminate` one
/// may have happened (a timeout after the script ran), so the caller must only
/// retry it if it is idempotent (ack, renew, release and sweep are).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The operation definitely did not happen (connection refused, pool
    /// exhausted, the store rejected the request before running it).
    #[error("{op} failed and did not happen: {detail}")]
    Failed { op: &'static str, detail: String },
    /// The operation may or may not have happened.
    #[error("{op} may have happened; its outcome is unknown: {detail}")]
    Indeterminate { op: &'static str, detail: String },
    /// The caller passed something the store cannot accept; nothing happened.
    #[error("{op} refused its input: {detail}")]
    InvalidInput { op: &'static str, detail: String },
}

impl StoreError {
    pub fn failed(op: &'static str, detail: impl Into<String>) -> Self {
        StoreError::Failed {
            op,
            detail: detail.into(),
        }
    }

    pub fn indeterminate(op: &'static str, detail: impl Into<String>) -> Self {
        StoreError::Indeterminate {
            op,
            detail: detail.into(),
        }
    }

    pub fn invalid(op: &'static str, detail: impl Into<String>) -> Self {
        StoreError::InvalidInput {
            op,
            detail: detail.into(),
        }
    }

    /// True when the operation may have taken effect despite the error.
    pub fn may_have_happened(&self) -> bool {
        matches!(self, StoreError::Indeterminate { .. })
    }

    /// The operation this error belongs to.
    pub fn op(&self) -> &'static str {
        match self {
            StoreError::Failed { op, .. }
            | StoreError::Indeterminate { op, .. }
            | StoreError::InvalidInput { op, .. } => op,
        }
    }
}
