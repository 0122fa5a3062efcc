//! The scripts' wire in one place: reply decoding into typed values, the argument tags the scripts switch on, and the packed values they store.
//!
//! Every script reply is read here, and every tag a script reads from
//! ARGV is named here; `lua/*.lua` headers document the same layouts.

use crate::conn::{Effect, bad_reply};
use claim_core::store::{AckOutcome, ClaimOutcome, DeadEntry, PendingEntry, RenewOutcome};
use claim_core::{Member, Millis, Op, Score, StoreError};
use redis::Value;

/// A batch reply of one value per item, or a bad-reply error for a write
/// (the script ran) when the count is off.
pub(crate) fn per_item<T>(op: Op, reply: Vec<T>, items: usize) -> Result<Vec<T>, StoreError> {
    if reply.len() != items {
        let what = format!("{} values for {items} items", reply.len());
        return Err(bad_reply(op, Effect::Write, what));
    }
    Ok(reply)
}

/// `claim.lua`'s reply: four values per item (code, redeliveries, score,
/// lease expiry); code 0 not pending, 1 duplicate dropped, 2 claimed, 3
/// claimed and cancelled, 4 dead-lettered.
pub(crate) fn claim_outcomes(
    reply: &[Value],
    items: usize,
) -> Result<Vec<ClaimOutcome>, StoreError> {
    let bad = |what: String| bad_reply(Op::Claim, Effect::Write, what);
    if reply.len() != 4 * items {
        return Err(bad(format!("{} values for {items} items", reply.len())));
    }
    reply
        .chunks(4)
        .map(|v| claim_outcome(v).ok_or_else(|| bad(format!("{v:?}"))))
        .collect()
}

fn claim_outcome(v: &[Value]) -> Option<ClaimOutcome> {
    let code = int(&v[0])?;
    Some(match code {
        0 => ClaimOutcome::NotPending,
        1 | 5 => ClaimOutcome::DuplicateDropped,
        4 => ClaimOutcome::DeadLettered,
        2 | 3 => ClaimOutcome::Claimed {
            cancelled: code == 3,
            redeliveries: u32::try_from(int(&v[1])?).ok()?,
            score: parse_score(bytes(&v[2])?)?,
            lease_expiry: Millis(u64::try_from(int(&v[3])?).ok()?),
        },
        _ => return None,
    })
}

/// `renew.lua`'s value per item: the new lease expiry, or -1 when lost.
pub(crate) fn renew_outcome(expiry: i64) -> RenewOutcome {
    match u64::try_from(expiry) {
        Ok(ms) => RenewOutcome::Renewed {
            lease_expiry: Millis(ms),
        },
        Err(_) => RenewOutcome::Lost,
    }
}

/// `ack.lua`'s value per item: bit 1 pushed, 2 claim dropped, 4
/// dead-lettered, 8 this very record's marker already there.
pub(crate) fn ack_outcome(code: i64) -> AckOutcome {
    AckOutcome {
        pushed: code & 1 != 0,
        claim_dropped: code & 2 != 0,
        dead_lettered: code & 4 != 0,
        own_record_landed: code & 8 != 0,
    }
}

/// A 1/0 answer per item (release, park, dead letter, cancel).
pub(crate) fn flag(value: i64) -> bool {
    value == 1
}

/// `reclaim.lua`'s per-claim tag: what phase one decided for the claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReclaimAs {
    /// An index entry without an owner entry: drop it.
    Ghost,
    /// Below the delivery limit: back to pending.
    Redeliver,
    /// At the limit, its result list cannot take a record: dead set only.
    Unusable,
    /// At the limit: a `DELIVERY_LIMIT` record, then the dead set.
    Limit,
    /// Hash-tagged layout, at the limit: the record was pushed already (in
    /// the list's slot); the dead set, and the generation ends answered.
    Pushed,
}

impl ReclaimAs {
    pub(crate) fn tag(self) -> &'static str {
        match self {
            ReclaimAs::Ghost => "g",
            ReclaimAs::Redeliver => "r",
            ReclaimAs::Unusable => "u",
            ReclaimAs::Limit => "l",
            ReclaimAs::Pushed => "x",
        }
    }
}

/// `promote.lua`'s per-entry tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PromoteAs {
    /// Back to its queue at its queue score (`wire::queue_score`).
    Promote,
    /// Unparsable or bound for a key that is not a queue: the dead set.
    Bury,
}

impl PromoteAs {
    pub(crate) fn tag(self) -> &'static str {
        match self {
            PromoteAs::Promote => "p",
            PromoteAs::Bury => "d",
        }
    }
}

/// The scripts' explicit-time flag: "1" when the store runs on an
/// injected clock (logical expiries live in the clock side hash).
pub(crate) fn explicit_time_arg(explicit: bool) -> &'static str {
    if explicit { "1" } else { "0" }
}

/// `ZRANGE .. WITHSCORES` as pending entries.
pub(crate) fn pending_entries(entries: Vec<(Vec<u8>, f64)>) -> Vec<PendingEntry> {
    entries
        .into_iter()
        .map(|(member, score)| PendingEntry {
            member: Member::from(member),
            score: Score(score),
        })
        .collect()
}

/// An integer reply (scripts return Lua numbers as integers).
fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(n) => Some(*n),
        Value::BulkString(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    }
}

/// A bulk or simple string reply as bytes.
fn bytes(v: &Value) -> Option<&[u8]> {
    match v {
        Value::BulkString(b) => Some(b),
        Value::SimpleString(s) => Some(s.as_bytes()),
        _ => None,
    }
}

/// A score as Redis prints it (`%.17g`, `inf`), read back exactly.
pub(crate) fn parse_score(text: &[u8]) -> Option<Score> {
    std::str::from_utf8(text).ok()?.parse().ok().map(Score)
}

/// A score as an argument Redis parses back to the same double (Rust
/// prints the shortest text that round-trips, never an exponent).
pub(crate) fn score_arg(score: Score) -> String {
    format!("{}", score.0)
}

/// A claim-owners entry, `owner|score|redeliveries`. The owner may contain
/// `|`; score and count cannot, so the entry splits from the right.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OwnerEntry {
    pub owner: String,
    pub score: Score,
    pub redeliveries: u32,
}

pub(crate) fn parse_owner(entry: &[u8]) -> Option<OwnerEntry> {
    let text = std::str::from_utf8(entry).ok()?;
    let (rest, count) = text.rsplit_once('|')?;
    let (owner, score) = rest.rsplit_once('|')?;
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(OwnerEntry {
        owner: owner.to_owned(),
        score: parse_score(score.as_bytes())?,
        redeliveries: count.parse().ok()?,
    })
}

/// The dead hash's value: `{"reason":..,"at_ms":..}`.
pub(crate) fn dead_json(reason: &str, at: Millis) -> String {
    serde_json::json!({ "reason": reason, "at_ms": at.0 }).to_string()
}

/// A dead entry; a value this store did not write is shown whole as the reason.
pub(crate) fn parse_dead(member: Vec<u8>, value: &[u8]) -> DeadEntry {
    let parsed: Option<(String, u64)> = serde_json::from_slice::<serde_json::Value>(value)
        .ok()
        .and_then(|v| Some((v["reason"].as_str()?.to_owned(), v["at_ms"].as_u64()?)));
    let (reason, at) = parsed.unwrap_or_else(|| (String::from_utf8_lossy(value).into_owned(), 0));
    DeadEntry {
        member: Member::from(member),
        reason,
        at: Millis(at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_entries_split_from_the_right_whatever_the_owner_holds() {
        let e = parse_owner(b"w|1|x|1700000000.5|3").unwrap();
        assert_eq!(
            (e.owner.as_str(), e.score, e.redeliveries),
            ("w|1|x", Score(1700000000.5), 3)
        );
        for bad in [&b"w|1"[..], b"w|x|1", b"w|1|", b"w|1|+2", b"|"] {
            assert_eq!(parse_owner(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn score_arguments_round_trip_exactly() {
        for s in [1700000030.123, 0.1, 1e21, 1700003600.0, f64::INFINITY] {
            let text = score_arg(Score(s));
            assert!(!text.contains('e'), "{text}");
            assert_eq!(parse_score(text.as_bytes()), Some(Score(s)));
        }
    }

    #[test]
    fn dead_entries_read_back_and_foreign_values_keep_their_text() {
        let d = parse_dead(
            b"m".to_vec(),
            dead_json("why \"quoted\"", Millis(5)).as_bytes(),
        );
        assert_eq!((d.reason.as_str(), d.at), ("why \"quoted\"", Millis(5)));
        let foreign = parse_dead(b"m".to_vec(), b"not json");
        assert_eq!(
            (foreign.reason.as_str(), foreign.at),
            ("not json", Millis(0))
        );
    }
}
