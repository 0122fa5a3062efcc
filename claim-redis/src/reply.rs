//! Reading what Redis and the scripts return: integers, texts, packed owner entries, dead entries, scores.

use claim_core::store::DeadEntry;
use claim_core::{Member, Millis, Score};
use redis::Value;

/// An integer reply (scripts return Lua numbers as integers).
pub(crate) fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(n) => Some(*n),
        Value::BulkString(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    }
}

/// A bulk or simple string reply as bytes.
pub(crate) fn bytes(v: &Value) -> Option<&[u8]> {
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
