//! Bytes as stored, by what they are: a pending member, a result record, a payload stored apart; one representation, three types the compiler keeps apart.
//!
//! All three are raw bytes that travel untouched: claim and release match
//! members byte for byte, a record is pushed as the caller wrote it, a
//! payload is forwarded as the producer stored it. Sharing one
//! representation keeps them cheap to clone (an `Arc`); the kind parameter
//! keeps a record from being passed where a member is expected.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::sync::Arc;

/// What stored bytes are; names them in `Debug`.
pub trait Kind {
    const NAME: &'static str;
}

/// Raw bytes of one kind ([`Member`], [`Record`], [`Payload`]), never
/// re-serialized.
pub struct Stored<K: Kind>(Arc<[u8]>, PhantomData<fn() -> K>);

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
}
impl Kind for RecordKind {
    const NAME: &'static str = "Record";
}
impl Kind for PayloadKind {
    const NAME: &'static str = "Payload";
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
        Stored(bytes.into(), PhantomData)
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
        Stored(self.0.clone(), PhantomData)
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
}
