//! Why a member cannot be processed: the one error every parse and re-write of a member returns.

/// Why a member cannot be processed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemberError {
    /// Not a JSON object at all: the member goes to the dead set.
    #[error("member is not a JSON object: {reason}")]
    NotJson { reason: String },
    /// No record can be keyed: the member goes to the dead set.
    #[error("member has no request id: expected data.id to be a non-empty string")]
    MissingId,
    /// The id or request token holds a NUL byte, so no claim key can be made
    /// for it (Go keys claims `<id>\0<token>`): the member goes to the dead set.
    #[error(
        "request {id:?} cannot be claimed: its {field} contains a NUL byte, which claim keys use as the separator"
    )]
    Unkeyable { id: String, field: &'static str },
    /// The id is known but a field is unusable: answer with `INVALID_REQUEST`.
    #[error("request {id:?}: invalid {field}: {reason}")]
    Invalid {
        id: String,
        field: &'static str,
        reason: String,
    },
}

impl MemberError {
    /// The request id, when the member had one.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            MemberError::Invalid { id, .. } | MemberError::Unkeyable { id, .. } => Some(id),
            _ => None,
        }
    }
}
