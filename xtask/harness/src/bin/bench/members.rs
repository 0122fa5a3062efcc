//! The requests the bench submits: payloads of a chosen size, members in the Go producer's shape, and the producer's commands for each.

use claim_core::wire::{Envelope, PAYLOAD_GRACE_MS, payload_key};
use std::ops::Range;

/// How many requests the bench enqueues per pipeline.
const ENQUEUE_BATCH: usize = 1000;

/// `seqs` cut into the runs of [`ENQUEUE_BATCH`] requests that are pipelined together.
pub fn enqueue_batches(seqs: Range<usize>) -> impl Iterator<Item = Range<usize>> {
    seqs.clone()
        .step_by(ENQUEUE_BATCH)
        .map(move |start| start..(start + ENQUEUE_BATCH).min(seqs.end))
}

/// The commands the Go producer sends for request `seq`, each with the key
/// it touches (a cluster routes it by that key): DEL the cancel marker, SET
/// the active token until the deadline, SET the payload until ten minutes
/// after it when `payloads` stores it apart, ZADD the member.
pub fn producer_commands(
    queue: &str,
    seq: usize,
    deadline: i64,
    payloads: Payloads,
) -> Vec<(String, redis::Cmd)> {
    // Both the active key and a stored payload live until the deadline
    // (the payload a grace longer), as the Go producer sets them.
    let ttl_ms = active_ttl_ms(deadline);
    let (id, token) = (crate::id_of(seq), crate::token_of(seq));
    let mut out = Vec::with_capacity(4);
    let cancel = format!("request-cancel:{id}");
    out.push((cancel.clone(), redis::cmd("DEL").arg(&cancel).to_owned()));
    out.push(set_active(seq, deadline));
    let (member, stored) = member(seq, deadline, payloads);
    if let Some(payload) = stored {
        let key = payload_key(&id, &token);
        let set_payload = redis::cmd("SET")
            .arg(&key)
            .arg(payload)
            .arg("PX")
            .arg(ttl_ms + PAYLOAD_GRACE_MS)
            .to_owned();
        out.push((key, set_payload));
    }
    let zadd = redis::cmd("ZADD")
        .arg(queue)
        .arg(deadline)
        .arg(member)
        .to_owned();
    out.push((queue.to_owned(), zadd));
    out
}

/// Milliseconds from now to `deadline` (Unix seconds), at least one: the
/// producer's expiry of the active key.
pub fn active_ttl_ms(deadline: i64) -> u64 {
    let left = deadline.saturating_sub(async_worker::clock::unix_now());
    u64::try_from(left).unwrap_or(0).saturating_mul(1000).max(1)
}

/// The active-key `SET` and the member of request `seq`, for a fill that
/// sends many members in one `ZADD` (see [`crate::target::Target::fill`]).
pub fn fill_parts(seq: usize, deadline: i64) -> (redis::Cmd, Vec<u8>) {
    let (_, set) = set_active(seq, deadline);
    (set, member(seq, deadline, Payloads::default()).0)
}

/// The producer's `SET request-active:<id> <token> PX <until the deadline>`, with its key.
fn set_active(seq: usize, deadline: i64) -> (String, redis::Cmd) {
    let active = format!("request-active:{}", crate::id_of(seq));
    let set = redis::cmd("SET")
        .arg(&active)
        .arg(crate::token_of(seq))
        .arg("PX")
        .arg(active_ttl_ms(deadline))
        .to_owned();
    (active, set)
}

/// How the bench's requests carry their payloads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Payloads {
    /// The payload's size in bytes (its JSON); 0 for the small default
    /// (`{"model":"m","prompt":"hi"}`).
    pub bytes: usize,
    /// Stored apart (`request-payload:<id>:<token>`, `"payload":null` in
    /// the member), as Go's producer does with `WithPayloadKeys`.
    pub by_reference: bool,
}

/// `{"model":"m","prompt":"…"}`, `bytes` long (the prompt padded with
/// `x`), or the small default for 0.
pub fn payload(bytes: usize) -> serde_json::Value {
    const EMPTY: usize = r#"{"model":"m","prompt":""}"#.len();
    let prompt = if bytes == 0 {
        "hi".to_owned()
    } else {
        "x".repeat(bytes.saturating_sub(EMPTY))
    };
    serde_json::json!({ "model": "m", "prompt": prompt })
}

/// A request as the Go producer shapes it: the member, and the payload
/// bytes to store apart when `payloads` says so.
pub fn member(seq: usize, deadline: i64, payloads: Payloads) -> (Vec<u8>, Option<Vec<u8>>) {
    let envelope = Envelope::new(
        crate::id_of(seq),
        crate::token_of(seq),
        deadline,
        payload(payloads.bytes),
    );
    if payloads.by_reference {
        let (envelope, bytes) = envelope.by_reference();
        (envelope.to_bytes(), Some(bytes))
    } else {
        (envelope.to_bytes(), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sized_payload_is_exactly_that_many_bytes_inline_or_stored_apart() {
        let inline = Payloads {
            bytes: 16384,
            by_reference: false,
        };
        let (small, none) = member(7, 1_800_000_000, inline);
        assert!(none.is_none());
        assert!(
            small.len() > 16384 && small.len() < 16384 + 300,
            "{}",
            small.len()
        );
        let by_ref = Payloads {
            by_reference: true,
            ..inline
        };
        let (member, stored) = member(7, 1_800_000_000, by_ref);
        assert_eq!(stored.map(|p| p.len()), Some(16384));
        let text = String::from_utf8(member).unwrap();
        assert!(
            text.contains(r#""payload_ref":"request-payload:r7:t7""#),
            "{text}"
        );
        assert!(text.contains(r#""payload":null"#), "{text}");
    }
}
