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

/// `claim.lua`'s reply, decoded: an outcome per item, and which items'
/// copies were dropped as answered while nobody holds their generation
/// (code 5: the caller deletes their payloads stored apart).
#[derive(Debug, PartialEq)]
pub(crate) struct ClaimReply {
    pub outcomes: Vec<ClaimOutcome>,
    pub answered_unheld: Vec<usize>,
}

/// `claim.lua`'s reply: one string, an entry per item separated by spaces,
/// each the code alone (0 not pending, 1 or 5 duplicate dropped, 4
/// dead-lettered) or, claimed (2, or 3 when cancelled),
/// `code,redeliveries,score,lease expiry ms`.
pub(crate) fn claim_reply(reply: &Value, items: usize) -> Result<ClaimReply, StoreError> {
    let bad = |what: String| bad_reply(Op::Claim, Effect::Write, what);
    let text = packed_text(Op::Claim, reply)?;
    let mut out = ClaimReply {
        outcomes: Vec::with_capacity(items),
        answered_unheld: Vec::new(),
    };
    for (i, entry) in entries(text).enumerate() {
        let outcome = claim_entry(entry).ok_or_else(|| {
            let entry = String::from_utf8_lossy(entry);
            bad(format!("entry {} of {items} is {entry:?}", i + 1))
        })?;
        if entry == b"5" {
            out.answered_unheld.push(i);
        }
        out.outcomes.push(outcome);
    }
    if out.outcomes.len() != items {
        let what = format!("{} entries for {items} items", out.outcomes.len());
        return Err(bad(what));
    }
    Ok(out)
}

fn claim_entry(entry: &[u8]) -> Option<ClaimOutcome> {
    let mut fields = entry.split(|&b| b == b',');
    let code = fields.next()?;
    let outcome = match code {
        b"0" => ClaimOutcome::NotPending,
        b"1" | b"5" => ClaimOutcome::DuplicateDropped,
        b"4" => ClaimOutcome::DeadLettered,
        b"2" | b"3" => ClaimOutcome::Claimed {
            cancelled: code == b"3",
            redeliveries: number(fields.next()?)?,
            score: parse_score(fields.next()?)?,
            lease_expiry: Millis(number(fields.next()?)?),
        },
        _ => return None,
    };
    fields.next().is_none().then_some(outcome)
}

/// A script's reply of one code per item packed in one string, separated
/// by spaces (`ack.lua`): the codes, checked to be exactly `items`.
pub(crate) fn packed_codes(op: Op, reply: &Value, items: usize) -> Result<Vec<i64>, StoreError> {
    let bad = |what: String| bad_reply(op, Effect::Write, what);
    let text = packed_text(op, reply)?;
    let codes: Option<Vec<i64>> = entries(text).map(number).collect();
    match codes {
        Some(codes) if codes.len() == items => Ok(codes),
        Some(codes) => Err(bad(format!("{} codes for {items} items", codes.len()))),
        None => Err(bad(format!("{:?}", String::from_utf8_lossy(text)))),
    }
}

/// A packed reply's one string; anything else is a bad reply.
fn packed_text(op: Op, reply: &Value) -> Result<&[u8], StoreError> {
    match reply {
        Value::BulkString(b) => Ok(b),
        Value::SimpleString(s) => Ok(s.as_bytes()),
        _ => Err(bad_reply(op, Effect::Write, format!("{reply:?}"))),
    }
}

/// The space-separated entries of a packed reply; none in an empty one
/// (a call of no items).
fn entries(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let text = if text.is_empty() { None } else { Some(text) };
    text.into_iter().flat_map(|t| t.split(|&b| b == b' '))
}

/// A whole number written in ASCII digits (no sign, no spaces).
fn number<T: std::str::FromStr>(text: &[u8]) -> Option<T> {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(text).ok()?.parse().ok()
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
    Some(OwnerEntry {
        owner: owner.to_owned(),
        score: parse_score(score.as_bytes())?,
        redeliveries: number(count.as_bytes())?,
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

    fn text(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn a_packed_claim_reply_decodes_every_outcome_and_names_the_answered_unheld() {
        let reply = claim_reply(
            &text("0 1 2,0,1700000000.5,1700000030500 5 4 3,2,-inf,9"),
            6,
        );
        let claimed = |cancelled, redeliveries, score, ms| ClaimOutcome::Claimed {
            cancelled,
            redeliveries,
            score: Score(score),
            lease_expiry: Millis(ms),
        };
        assert_eq!(
            reply.unwrap(),
            ClaimReply {
                outcomes: vec![
                    ClaimOutcome::NotPending,
                    ClaimOutcome::DuplicateDropped,
                    claimed(false, 0, 1700000000.5, 1700000030500),
                    ClaimOutcome::DuplicateDropped,
                    ClaimOutcome::DeadLettered,
                    claimed(true, 2, f64::NEG_INFINITY, 9),
                ],
                answered_unheld: vec![3],
            }
        );
    }

    #[test]
    fn a_claim_reply_of_the_wrong_count_or_a_bad_entry_is_an_error_naming_it() {
        let err = |reply: Value, items| claim_reply(&reply, items).unwrap_err().to_string();
        assert!(err(text("0 0"), 3).contains("2 entries for 3 items"));
        for bad in ["2,0,1", "2,0,1,5,6", "2,-1,1,5", "7", "0,", "", "2,0,x,5"] {
            let e = err(text(&format!("0 {bad}")), 2);
            assert!(e.contains("entry 2 of 2"), "{bad:?}: {e}");
        }
        assert!(claim_reply(&Value::Array(vec![]), 1).is_err());
        assert_eq!(claim_reply(&text(""), 0).unwrap().outcomes, vec![]);
    }

    #[test]
    fn packed_codes_are_exactly_one_unsigned_integer_per_item() {
        assert_eq!(
            packed_codes(Op::Ack, &text("3 1 19"), 3).unwrap(),
            vec![3, 1, 19]
        );
        assert_eq!(
            packed_codes(Op::Ack, &text(""), 0).unwrap(),
            Vec::<i64>::new()
        );
        for (reply, items) in [("3 1", 3), ("3 1 2", 2), ("3  1", 2), ("-1", 1), ("1.5", 1)] {
            assert!(
                packed_codes(Op::Ack, &text(reply), items).is_err(),
                "{reply:?}"
            );
        }
    }
}
