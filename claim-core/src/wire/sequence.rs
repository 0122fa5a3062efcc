//! The enqueue sequence and the queue score (`deadline + min(seq, 2^21-1)/2^21`), the producer's per-request keys, and stamping a sequence into a member.

use super::go_order::{raw, restamp};
use super::member_error::MemberError;
use crate::types::Score;

/// Sequences at or above this share the last fraction step: `2^21 - 1`.
pub const MAX_ENQUEUE_SEQ: i64 = (1 << 21) - 1;
/// The fraction denominator: `2^21`.
const SEQ_SCALE: f64 = (1u64 << 21) as f64;
/// Prefix of the key holding a request's payload stored apart.
pub const PAYLOAD_KEY_PREFIX: &str = "request-payload:";
/// Prefix of the per-queue, per-deadline enqueue counter.
pub const SEQ_KEY_PREFIX: &str = "request-seq:";
/// A stored payload outlives the deadline by this much (Go: 10 min).
pub const PAYLOAD_GRACE_MS: u64 = 10 * 60 * 1000;
/// A sequence counter outlives its deadline by this much (Go: 1 h).
pub const SEQ_GRACE_SECS: i64 = 3600;

/// The pending score of a member: `deadline + min(seq, 2^21-1) / 2^21`.
///
/// Without a sequence (absent, 0 or negative) the score is exactly the
/// deadline, ahead of every stamped peer. Exact in f64 for deadlines below
/// 2^32: 32 integer bits plus 21 fraction bits fit the 53-bit mantissa.
pub fn queue_score(deadline: i64, enqueue_seq: Option<i64>) -> Score {
    let seq = enqueue_seq.unwrap_or(0).clamp(0, MAX_ENQUEUE_SEQ);
    Score(deadline as f64 + seq as f64 / SEQ_SCALE)
}

/// `request-payload:<id>:<token>`: where a producer stores a payload apart.
pub fn payload_key(id: &str, token: &str) -> String {
    format!("{PAYLOAD_KEY_PREFIX}{id}:{token}")
}

/// `request-seq:<queue>:<deadline>`: the counter that numbers submissions
/// to one queue with one deadline.
pub fn seq_key(queue: &str, deadline: i64) -> String {
    format!("{SEQ_KEY_PREFIX}{queue}:{deadline}")
}

/// A member split where its `internal.enqueue_seq` value goes: the member
/// stamped with sequence `n` is `prefix ++ n ++ suffix`. A store's enqueue
/// script learns the sequence only when it runs, so it splices it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeqTemplate {
    pub prefix: Vec<u8>,
    pub suffix: Vec<u8>,
}

impl SeqTemplate {
    /// The member stamped with `seq`.
    pub fn stamp(&self, seq: i64) -> Vec<u8> {
        [&self.prefix[..], seq.to_string().as_bytes(), &self.suffix].concat()
    }
}

/// Splits `member` where `internal.enqueue_seq` goes: in place of an
/// existing value, else where Go's field order puts it (an `internal`
/// object is added when missing). Every other value keeps its bytes, as
/// [`super::stamp_retry`] keeps them. Fails when the member is not a JSON
/// object or its `internal` is not one.
pub fn seq_template(member: &[u8]) -> Result<SeqTemplate, MemberError> {
    // Stamp two one-digit sentinels; the outputs differ in that digit only.
    let one = restamp(member, &[("enqueue_seq", &raw(b"1".to_vec()))])?;
    let two = restamp(member, &[("enqueue_seq", &raw(b"2".to_vec()))])?;
    let at = one.iter().zip(&two).take_while(|(a, b)| a == b).count();
    debug_assert_eq!(one.len(), two.len());
    debug_assert_eq!((one[at], two[at]), (b'1', b'2'));
    Ok(SeqTemplate {
        prefix: one[..at].to_vec(),
        suffix: one[at + 1..].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_zero_or_negative_sequence_scores_exactly_the_deadline() {
        for seq in [None, Some(0), Some(-1), Some(i64::MIN)] {
            assert_eq!(queue_score(1_700_000_000, seq), Score(1_700_000_000.0));
        }
    }

    #[test]
    fn sequences_order_ties_within_one_deadline_and_never_reach_the_next() {
        let d = 4_294_967_295; // 2^32 - 1, the largest exact deadline
        let scores: Vec<Score> = (0..5).map(|s| queue_score(d, Some(s))).collect();
        assert!(scores.windows(2).all(|w| w[0] < w[1]), "{scores:?}");
        assert!(queue_score(d, Some(MAX_ENQUEUE_SEQ)) < queue_score(d + 1, None));
        assert_eq!(queue_score(d, Some(1)).0, d as f64 + 1.0 / 2_097_152.0);
        assert_eq!(queue_score(d, Some(1)).0 - d as f64, 1.0 / 2_097_152.0);
    }

    #[test]
    fn sequences_at_or_above_the_cap_tie() {
        let d = 1_800_000_000;
        let cap = queue_score(d, Some(MAX_ENQUEUE_SEQ));
        assert_eq!(queue_score(d, Some(MAX_ENQUEUE_SEQ + 1)), cap);
        assert_eq!(queue_score(d, Some(i64::MAX)), cap);
        assert!(queue_score(d, Some(MAX_ENQUEUE_SEQ - 1)) < cap);
    }

    #[test]
    fn scores_print_back_exactly_with_seventeen_significant_digits() {
        let s = queue_score(1_799_999_999, Some(12_345));
        let printed = format!("{:.17e}", s.0);
        assert_eq!(printed.parse::<f64>().unwrap(), s.0);
    }

    #[test]
    fn a_template_stamps_the_sequence_where_go_writes_it() {
        let member = br#"{"internal":{"request_token":"t","result_queue_name":"r","labels":{"a":"b"}},"request_kind":"redis","data":{"id":"x","deadline":5,"payload":{}}}"#;
        let t = seq_template(member).unwrap();
        assert_eq!(
            String::from_utf8(t.stamp(42)).unwrap(),
            r#"{"internal":{"request_token":"t","result_queue_name":"r","enqueue_seq":42,"labels":{"a":"b"}},"request_kind":"redis","data":{"id":"x","deadline":5,"payload":{}}}"#
        );
    }

    #[test]
    fn a_template_replaces_an_existing_sequence_and_adds_a_missing_internal() {
        let member = br#"{"internal":{"enqueue_seq":9},"request_kind":"redis","data":{"id":"x"}}"#;
        let stamped = seq_template(member).unwrap().stamp(1234);
        assert_eq!(
            String::from_utf8(stamped).unwrap(),
            r#"{"internal":{"enqueue_seq":1234},"request_kind":"redis","data":{"id":"x"}}"#
        );
        let bare = br#"{"request_kind":"plain","data":{"id":"y"}}"#;
        let stamped = seq_template(bare).unwrap().stamp(7);
        assert_eq!(
            String::from_utf8(stamped).unwrap(),
            r#"{"internal":{"enqueue_seq":7},"request_kind":"plain","data":{"id":"y"}}"#
        );
        assert!(seq_template(b"[1]").is_err());
        assert!(seq_template(br#"{"internal":3}"#).is_err());
    }
}
