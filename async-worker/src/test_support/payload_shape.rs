//! How a stand-in producer (the demo's, the chaos run's) carries a request's payload: inline, stored apart, or stored apart with nothing written.
//!
//! Like the gateway, the demo compiles this file into the binary too.

use claim_core::store::Submission;
use claim_core::wire::Envelope;

/// How a request carries its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadShape {
    /// In the member, as `data.payload`.
    Inline,
    /// Stored apart at `request-payload:<id>:<token>`, `"payload":null` in the member.
    ByReference,
    /// Submitted by reference with no payload stored: must end `PAYLOAD_UNAVAILABLE`.
    Missing,
}

impl PayloadShape {
    /// `envelope` as the submission this shape makes of it.
    pub fn submission(self, envelope: Envelope) -> Submission {
        match self {
            PayloadShape::Inline => envelope.submission(),
            PayloadShape::ByReference => envelope.submission_by_reference(),
            PayloadShape::Missing => Submission {
                payload: None,
                ..envelope.submission_by_reference()
            },
        }
    }
}
