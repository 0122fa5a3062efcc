//! What a peeked member becomes before it is claimed: a candidate with its generation and a plan (dispatch it, or record why it is invalid).
//!
//! A leaf: the consumer builds candidates, the claim calls carry them, and
//! dispatch reads their plans.

use crate::gate::{GateRecord, Releases};
use claim_core::Generation;
use claim_core::store::PendingEntry;
use claim_core::wire::{self, MemberError, ParsedMember};

/// What the consumer decided about one peeked member before claiming it.
pub(super) enum Plan {
    Dispatch(Box<ParsedMember>),
    /// Parsable as far as its id, but invalid: claim it and record why.
    Invalid(String),
    /// The queue gate dropped it: claim it and write the gate's record
    /// (`GATE_DROPPED` when the gate gave none).
    Dropped(Box<ParsedMember>, Option<GateRecord>),
}

/// A peeked member on its way to a claim call.
pub(super) struct Candidate {
    pub entry: PendingEntry,
    pub generation: Generation,
    pub plan: Plan,
    /// What the queue gate reserved for it: released once its claim leaves
    /// this runtime, or at once (on drop) when the claim is not won.
    pub releases: Releases,
}

impl Candidate {
    /// Its `data.created`, when it is dispatchable and has one.
    pub fn created(&self) -> Option<i64> {
        match &self.plan {
            Plan::Dispatch(parsed) => parsed.created,
            Plan::Invalid(_) | Plan::Dropped(..) => None,
        }
    }

    /// What `entry` becomes: dispatchable when it parses, invalid (claimed,
    /// then answered `INVALID_REQUEST`) when only its id and token can be
    /// read; a member with no usable generation is the caller's to
    /// dead-letter, with the returned reason.
    pub fn of(entry: PendingEntry) -> Result<Candidate, (PendingEntry, MemberError)> {
        let (generation, plan) = match entry.member.parse() {
            Ok(parsed) => {
                let generation = Generation::new(parsed.id.clone(), parsed.token.clone());
                (generation, Plan::Dispatch(Box::new(parsed)))
            }
            Err(MemberError::Invalid { id, field, reason }) => {
                // Read as loosely as possible, so its INVALID_REQUEST record
                // is keyed to the right generation.
                let token = lenient_internal(entry.member.as_bytes(), "request_token");
                let token = token.unwrap_or_default();
                if token.contains('\0') {
                    // No claim key can be made for it (see MemberError::Unkeyable).
                    let field = "internal.request_token";
                    return Err((entry, MemberError::Unkeyable { id, field }));
                }
                let why = format!("invalid {field}: {reason}");
                (Generation::new(id, token), Plan::Invalid(why))
            }
            Err(e) => return Err((entry, e)),
        };
        Ok(Candidate {
            entry,
            generation,
            plan,
            releases: Releases::new(),
        })
    }
}

/// The payload key of a member that failed validation, so its
/// INVALID_REQUEST ack deletes it: only the generation's own
/// `request-payload:<id>:<token>`, and only when the member names it (a
/// member naming any other key gets no key read or deleted).
pub(super) fn lenient_payload_ref(
    generation: &Generation,
    member: &claim_core::Member,
) -> Option<String> {
    let named = lenient_internal(member.as_bytes(), "payload_ref");
    wire::lenient_payload_key(&generation.id, &generation.token, named.as_deref())
}

fn lenient_internal(raw: &[u8], field: &str) -> Option<String> {
    serde_json::from_slice::<serde_json::Value>(raw)
        .ok()
        .and_then(|v| {
            v.get("internal")
                .and_then(|i| i.get(field))
                .and_then(|t| t.as_str())
                .map(str::to_owned)
        })
}
