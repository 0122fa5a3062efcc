//! Payloads stored apart (`internal.payload_ref`): fetched in one store call per claim call, for the members about to go to a worker only.
//!
//! A member that ends without a handler call (past its deadline, cancelled,
//! invalid, refused by the gate, dead-lettered, or without a worker permit)
//! never fetches. A payload that is gone ends its request with one
//! `PAYLOAD_UNAVAILABLE` record through the ordinary ack, which deletes the
//! key. The handler gets the fetched payload as `request.parsed.payload`;
//! `request.member` stays the stored bytes (`"payload":null`), so a retry
//! parks the envelope only and leaves the payload key alone.
//!
//! A failed fetch releases the claims waiting for it, as Go does: release is
//! owner-checked and not a delivery, the members return to pending at their
//! score, and the consumer pauses a poll interval before peeking again. A
//! retry here would hold worker permits and the claims' leases on a store
//! that just failed, while a release costs one call and loses nothing.

use super::consumer::Consumer;
use super::consumer::release;
use super::dispatch::Ready;
use super::settlement::Claimed;
use claim_core::Payload;
use claim_core::wire::{ErrorCode, PAYLOAD_MISSING_MESSAGE};
use serde_json::value::RawValue;

/// Go's message when a fetched payload cannot become the request's payload.
pub const PAYLOAD_UNATTACHABLE_MESSAGE: &str = "request payload could not be attached";

impl Consumer {
    /// Attaches the payloads of the members stored apart, in one fetch.
    /// Returns the members to hand to workers, and whether the fetch failed
    /// (its members were released).
    pub(super) async fn attach_payloads(&self, ready: Vec<Ready>) -> (Vec<Ready>, bool) {
        let (by_ref, mut inline): (Vec<Ready>, Vec<Ready>) = ready
            .into_iter()
            .partition(|r| r.request.parsed.payload_ref.is_some());
        if by_ref.is_empty() {
            return (inline, false);
        }
        let (shared, queue) = (&self.shared, &self.queue);
        let refs: Vec<String> = by_ref
            .iter()
            .filter_map(|r| r.request.parsed.payload_ref.clone())
            .collect();
        let fetched = match shared.store.fetch_payloads(&refs).await {
            Ok(fetched) if fetched.len() == refs.len() => fetched,
            answer => {
                let error = match answer {
                    Err(e) => {
                        shared.signals.note_store_error(&e);
                        e.to_string()
                    }
                    Ok(fetched) => format!(
                        "the store answered {} of {} payloads",
                        fetched.len(),
                        refs.len()
                    ),
                };
                tracing::warn!(%queue, %error, claims = by_ref.len(), "payload fetch failed; releasing the claims waiting for it");
                let generations: Vec<_> =
                    by_ref.into_iter().map(|r| r.request.generation).collect();
                release(shared, queue, &generations).await;
                return (inline, true);
            }
        };
        for (mut ready, payload) in by_ref.into_iter().zip(fetched) {
            match attach(payload) {
                Ok(payload) => {
                    ready.request.parsed.payload = payload;
                    inline.push(ready);
                }
                Err(message) => {
                    drop(ready.permit);
                    let request = ready.request;
                    tracing::info!(%queue, request = %request.generation, message, "payload stored apart is unavailable");
                    let claimed = Claimed::of(&request);
                    let code = ErrorCode::PayloadUnavailable;
                    self.record_without_handler(claimed, ready.destination, code, message)
                        .await;
                }
            }
        }
        (inline, false)
    }
}

/// The request's payload from what the store holds at its `payload_ref`:
/// empty bytes are a `null` payload (Go stores `null` so); anything else
/// must be a JSON object or `null`. The error is the record's message.
pub fn attach(stored: Option<Payload>) -> Result<Box<RawValue>, &'static str> {
    let stored = stored.ok_or(PAYLOAD_MISSING_MESSAGE)?;
    let text = std::str::from_utf8(stored.as_bytes()).map_err(|_| PAYLOAD_UNATTACHABLE_MESSAGE)?;
    let text = text.trim_matches([' ', '\t', '\n', '\r']);
    let text = if text.is_empty() { "null" } else { text };
    let raw = RawValue::from_string(text.to_owned()).map_err(|_| PAYLOAD_UNATTACHABLE_MESSAGE)?;
    if raw.get().starts_with('{') || raw.get() == "null" {
        Ok(raw)
    } else {
        Err(PAYLOAD_UNATTACHABLE_MESSAGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(text: &str) -> Option<Payload> {
        Some(Payload::from(text))
    }

    #[test]
    fn a_stored_object_is_attached_byte_for_byte() {
        let raw = attach(stored(r#"{"prompt":"hi","n":1.50}"#)).expect("attaches");
        assert_eq!(raw.get(), r#"{"prompt":"hi","n":1.50}"#);
    }

    #[test]
    fn an_empty_stored_value_is_a_null_payload_as_go_stores_it() {
        assert_eq!(attach(stored("")).expect("attaches").get(), "null");
        assert_eq!(attach(stored("null")).expect("attaches").get(), "null");
    }

    #[test]
    fn a_missing_key_is_payload_missing() {
        assert_eq!(attach(None).unwrap_err(), "request payload is missing");
    }

    #[test]
    fn a_stored_value_that_is_not_an_object_cannot_be_attached() {
        for bad in ["[1,2]", "\"text\"", "{\"open\":", "7"] {
            assert_eq!(
                attach(stored(bad)).unwrap_err(),
                PAYLOAD_UNATTACHABLE_MESSAGE,
                "{bad}"
            );
        }
        let not_utf8 = Some(Payload::from(vec![0xff, 0xfe]));
        assert_eq!(attach(not_utf8).unwrap_err(), PAYLOAD_UNATTACHABLE_MESSAGE);
    }
}
