//! Bytes as stored, by what they are: a pending member, a result record, a payload stored apart; one representation, three types the compiler keeps apart.
//!
//! All three are raw bytes that travel untouched: claim and release match
//! members byte for byte, a record is pushed as the caller wrote it, a
//! payload is forwarded as the producer stored it. Sharing one
//! representation keeps them cheap to clone (an `Arc`); the kind parameter
//! keeps a record from being passed where a member is expected. A member
//! also remembers its `data.deadline` once read ([`Member::deadline`]), so
//! the runtime's parse, the claim and the ack read it from the bytes once.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering as AtomicOrdering};

use crate::wire::{self, MemberError, ParsedMember};

/// What stored bytes are; names them in `Debug`.
pub trait Kind {
    const NAME: &'static str;
    /// What a value of this kind remembers about its bytes once read.
    type Memo: Clone + Default + Send + Sync;
}

/// Raw bytes of one kind ([`Member`], [`Record`], [`Payload`]), never
/// re-serialized.
pub struct Stored<K: Kind>(Arc<[u8]>, K::Memo, PhantomData<fn() -> K>);

/// A member's `data.deadline` as [`wire::member_deadline`] reads it, once
/// read (by [`Member::deadline`] or [`Member::parse`]); clones made after
/// that carry it. Never set from anything but these bytes. One word:
/// [`DeadlineMemo::UNREAD`], [`DeadlineMemo::NONE`] (no readable
/// deadline) or the deadline itself (always at least 1).
#[derive(Debug)]
pub struct DeadlineMemo(AtomicI64);

impl DeadlineMemo {
    const UNREAD: i64 = 0;
    const NONE: i64 = -1;

    fn get(&self) -> Option<Option<i64>> {
        // Relaxed: the value is a function of immutable bytes, so racing
        // readers store the same number and any one seen is right.
        match self.0.load(AtomicOrdering::Relaxed) {
            Self::UNREAD => None,
            Self::NONE => Some(None),
            deadline => Some(Some(deadline)),
        }
    }

    fn set(&self, deadline: Option<i64>) {
        debug_assert!(deadline.is_none_or(|d| d >= 1), "{deadline:?}");
        let word = deadline.filter(|d| *d >= 1).unwrap_or(Self::NONE);
        self.0.store(word, AtomicOrdering::Relaxed);
    }
}

impl Default for DeadlineMemo {
    fn default() -> Self {
        DeadlineMemo(AtomicI64::new(Self::UNREAD))
    }
}

impl Clone for DeadlineMemo {
    fn clone(&self) -> Self {
        DeadlineMemo(AtomicI64::new(self.0.load(AtomicOrdering::Relaxed)))
    }
}

/// Marks a sorted-set member: the request envelope exactly as the producer
/// wrote it (unknown fields, key order, spacing kept).
#[derive(Debug)]
pub enum MemberKind {}
/// Marks a result record: the JSON a consumer `BRPOP`s.
#[derive(Debug)]
pub enum RecordKind {}
/// Marks a payload stored apart at `request-payload:<id>:<token>`.
#[derive(Debug)]
pub enum PayloadKind {}

impl Kind for MemberKind {
    const NAME: &'static str = "Member";
    type Memo = DeadlineMemo;
}
impl Kind for RecordKind {
    const NAME: &'static str = "Record";
    type Memo = ();
}
impl Kind for PayloadKind {
    const NAME: &'static str = "Payload";
    type Memo = ();
}

/// A sorted-set member exactly as stored.
pub type Member = Stored<MemberKind>;
/// A result record exactly as pushed.
pub type Record = Stored<RecordKind>;
/// A payload stored apart, exactly as the producer stored it (empty bytes
/// stand for a `null` payload, as Go stores it).
pub type Payload = Stored<PayloadKind>;

impl<K: Kind> Stored<K> {
    pub fn new(bytes: impl Into<Arc<[u8]>>) -> Self {
        Stored(bytes.into(), K::Memo::default(), PhantomData)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Member {
    /// The member's `data.deadline`, exactly [`wire::member_deadline`] of
    /// its bytes, read from them at most once per member (the stores ask
    /// for it on every claim and ack: the lease and the marker follow it).
    pub fn deadline(&self) -> Option<i64> {
        self.1.get().unwrap_or_else(|| {
            let deadline = wire::member_deadline(self.as_bytes());
            self.1.set(deadline);
            deadline
        })
    }

    /// [`wire::parse_member`] of the bytes; a member that parses also
    /// remembers its deadline (a parsed member's `deadline` is what
    /// [`wire::member_deadline`] reads: both take the last `data` object's
    /// last `deadline`, in the same range), so the claim and the ack of a
    /// parsed member read nothing more.
    pub fn parse(&self) -> Result<ParsedMember, MemberError> {
        let parsed = wire::parse_member(self.as_bytes())?;
        // Already set means read from the same bytes: the same value.
        self.1.set(Some(parsed.deadline));
        Ok(parsed)
    }
}

impl<K: Kind> From<Vec<u8>> for Stored<K> {
    fn from(v: Vec<u8>) -> Self {
        Stored::new(v)
    }
}

impl<K: Kind> From<&str> for Stored<K> {
    fn from(s: &str) -> Self {
        Stored::new(s.as_bytes())
    }
}

impl<K: Kind> Clone for Stored<K> {
    fn clone(&self) -> Self {
        Stored(self.0.clone(), self.1.clone(), PhantomData)
    }
}

impl<K: Kind> PartialEq for Stored<K> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<K: Kind> Eq for Stored<K> {}

impl<K: Kind> PartialOrd for Stored<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K: Kind> Ord for Stored<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }
}

impl<K: Kind> Hash for Stored<K> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl<K: Kind> fmt::Debug for Stored<K> {
    // Members, records and payloads carry request data: a bounded prefix only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = String::from_utf8_lossy(&self.0[..self.0.len().min(64)]);
        write!(f, "{}({} bytes: {:?}", K::NAME, self.0.len(), text)?;
        if self.0.len() > 64 {
            write!(f, "…")?;
        }
        write!(f, ")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_debugs_under_its_own_name_with_a_bounded_prefix() {
        let long = "x".repeat(100);
        assert_eq!(
            format!("{:?}", Record::from("{}")),
            "Record(2 bytes: \"{}\")"
        );
        let shown = format!("{:?}", Member::from(long.as_str()));
        assert!(
            shown.starts_with("Member(100 bytes: ") && shown.ends_with("…)"),
            "{shown}"
        );
        assert_eq!(Payload::from("").len(), 0);
    }

    #[test]
    fn a_parsed_member_remembers_its_deadline_and_clones_made_after_carry_it() {
        let member = Member::from(
            r#"{"request_kind":"redis","data":{"id":"a","deadline":1700000600,"payload":null}}"#,
        );
        let before = member.clone();
        assert_eq!(member.1.get(), None, "nothing is read until asked");
        assert_eq!(
            member.parse().expect("a valid member").deadline,
            1_700_000_600
        );
        assert_eq!(member.1.get(), Some(Some(1_700_000_600)));
        assert_eq!(member.clone().1.get(), Some(Some(1_700_000_600)));
        assert_eq!(before.1.get(), None, "a clone made before reads for itself");
        assert_eq!(before.deadline(), Some(1_700_000_600));
    }

    #[test]
    fn a_member_that_does_not_parse_still_reads_its_deadline_as_the_stores_do() {
        for raw in [
            r#"{"data":{"deadline":5}}"#,
            r#"{"data":{"deadline":"5"}}"#,
            "not json",
        ] {
            let member = Member::from(raw);
            assert!(member.parse().is_err(), "{raw}");
            assert_eq!(
                member.deadline(),
                wire::member_deadline(raw.as_bytes()),
                "{raw}"
            );
            assert_eq!(member.1.get(), Some(wire::member_deadline(raw.as_bytes())));
        }
    }
}
