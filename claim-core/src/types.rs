//! Value types shared by the model, the stores and the worker: ids, tokens, generations, owners, scores, time.

pub use crate::stored::Member;
use std::fmt;

/// A point in time: milliseconds since the Unix epoch.
///
/// claim-core never reads a clock; whoever calls a transition says what time it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Millis(pub u64);

impl Millis {
    /// Adds a duration in milliseconds, saturating at the end of time.
    pub fn plus(self, ms: u64) -> Millis {
        Millis(self.0.saturating_add(ms))
    }

    /// Milliseconds from `self` until `later` (zero when `later` has passed).
    pub fn until(self, later: Millis) -> u64 {
        later.0.saturating_sub(self.0)
    }

    /// This time as a sorted-set score (Unix seconds with millisecond precision).
    pub fn as_score(self) -> Score {
        Score(self.0 as f64 / 1000.0)
    }
}

/// A sorted-set score. In the pending set it is the request's deadline in Unix
/// seconds; in the retry set the due time; in the claims index the lease expiry.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Score(pub f64);

impl Score {
    /// The score read as a time, rounded to the millisecond and clamped at the epoch.
    pub fn as_millis(self) -> Millis {
        let ms = (self.0 * 1000.0).round();
        if ms.is_nan() || ms <= 0.0 {
            Millis(0)
        } else if ms >= u64::MAX as f64 {
            Millis(u64::MAX)
        } else {
            Millis(ms as u64)
        }
    }
}

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// One submission of a request: its id plus the producer's request token.
///
/// Resubmitting an id with a new token is a new generation: it must not be
/// suppressed by the old generation's terminal marker nor share its claim.
/// A member without a token has the empty token.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Generation {
    pub id: String,
    pub token: String,
}

impl Generation {
    pub fn new(id: impl Into<String>, token: impl Into<String>) -> Self {
        Generation {
            id: id.into(),
            token: token.into(),
        }
    }

    /// The terminal-marker key: `<len(id)>:<id>:<token>` (claims use
    /// [`Generation::claim_key`], Go's format).
    ///
    /// The length prefix makes the key unambiguous whatever `:` the id or
    /// token contain, so no two generations share a key.
    pub fn key(&self) -> String {
        format!("{}:{}:{}", self.id.len(), self.id, self.token)
    }

    /// Reads a key written by [`Generation::key`].
    pub fn from_key(key: &str) -> Option<Generation> {
        let (len, rest) = key.split_once(':')?;
        let len: usize = len.parse().ok()?;
        let id = rest.get(..len)?;
        let token = rest.get(len..)?.strip_prefix(':')?;
        Some(Generation::new(id, token))
    }

    /// The claim key, as today's Go processor writes it: `<id>\0<token>`,
    /// or just `<id>` without a token. It names the generation's field in
    /// `<q>:claimed`, `<q>:claim-owners` and `<q>:deliveries` and its member
    /// in `<q>:claims-idx`, so Go's reclaimer and claim script find our
    /// claims and ours find Go's. Members whose id or token holds a NUL are
    /// refused when parsed, so the key splits at its only NUL unambiguously;
    /// a tokenless id and the same id with a token differ (no NUL).
    pub fn claim_key(&self) -> String {
        ClaimKey(self).to_string()
    }

    /// Whether a claim key can be made for this generation: neither id nor
    /// token holds a NUL, so [`Generation::claim_key`] holds at most one
    /// and splits back unambiguously, and no claim key can equal a name a
    /// store keeps for itself (claim-redis's placeholder holds two). Every
    /// store's claim claims nothing for a generation that is not.
    pub fn is_keyable(&self) -> bool {
        !self.id.contains('\0') && !self.token.contains('\0')
    }

    /// Reads a key written by [`Generation::claim_key`] (or by Go): the id
    /// up to the first NUL, the token after it; no NUL, no token.
    pub fn from_claim_key(key: &str) -> Generation {
        match key.split_once('\0') {
            Some((id, token)) => Generation::new(id, token),
            None => Generation::new(key, ""),
        }
    }
}

/// [`Generation::claim_key`], displayed without building a String (the
/// hot path writes thousands of keys per call straight into a command).
#[derive(Debug)]
pub struct ClaimKey<'a>(pub &'a Generation);

impl fmt::Display for ClaimKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = self.0;
        if g.token.is_empty() {
            f.write_str(&g.id)
        } else {
            write!(f, "{}\0{}", g.id, g.token)
        }
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.token.is_empty() {
            write!(f, "{}", self.id)
        } else {
            write!(f, "{}@{}", self.id, self.token)
        }
    }
}

/// Identifies the holder of a claim (one per worker incarnation). Every
/// mutation of a claim is checked against it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OwnerToken(pub String);

impl OwnerToken {
    pub fn new(token: impl Into<String>) -> Self {
        OwnerToken(token.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A replica's token: `random` as 32 hex digits, after `<pod>/` when
    /// the replica knows its pod. The pod is kept to ASCII letters, digits,
    /// `.`, `-` and `_`, at most 63 of them (a DNS label); an empty one is
    /// no pod. A store compares a token whole and never parses it (the
    /// packed owner entry splits from the right), so the prefix changes
    /// nothing there.
    pub fn for_pod(pod: Option<&str>, random: u128) -> Self {
        let pod: String = pod
            .unwrap_or_default()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
            .take(63)
            .collect();
        OwnerToken(match pod.is_empty() {
            true => format!("{random:032x}"),
            false => format!("{pod}/{random:032x}"),
        })
    }

    /// The pod this token names ([`Self::for_pod`]): what precedes its last
    /// `/` when 32 hex digits follow it; `None` for a token without one (a
    /// Go processor's, or a replica's from before pods were named).
    pub fn pod(&self) -> Option<&str> {
        let (pod, random) = self.0.rsplit_once('/')?;
        let hex = random.len() == 32 && random.bytes().all(|b| b.is_ascii_hexdigit());
        (hex && !pod.is_empty()).then_some(pod)
    }

    /// This owner on `queue`: the holder every claim-touching store call
    /// names (`store.claim(owner.on(queue), &items)`).
    pub fn on<'a>(&'a self, queue: &'a str) -> Holder<'a> {
        Holder { queue, owner: self }
    }
}

/// Who holds claims, and where: one owner token on one queue. Claiming,
/// renewing, acking, releasing and parking act only on claims this holder
/// has in this queue; every other claim is left untouched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holder<'a> {
    pub queue: &'a str,
    pub owner: &'a OwnerToken,
}

impl fmt::Display for OwnerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_token_names_its_pod_and_tokens_without_one_name_none() {
        let token = OwnerToken::for_pod(Some("worker-7f9c-abcde"), 7);
        assert_eq!(token.pod(), Some("worker-7f9c-abcde"));
        let bare = OwnerToken::for_pod(None, 7);
        assert_eq!(bare.as_str().len(), 32);
        assert_eq!(bare.pod(), None);
        assert_eq!(
            OwnerToken::for_pod(Some("|/ "), 7),
            bare,
            "nothing usable: no pod"
        );
        assert_eq!(
            OwnerToken::new("0123456789abcdef").pod(),
            None,
            "a Go processor's token"
        );
        assert_eq!(
            OwnerToken::new("a/b").pod(),
            None,
            "not 32 hex digits after the slash"
        );
        assert_eq!(OwnerToken::new(format!("/{}", "0".repeat(32))).pod(), None);
    }

    #[test]
    fn generation_keys_round_trip_whatever_colons_they_hold() {
        for (id, token) in [("a", "b"), ("a:b", "c"), ("a", "b:c"), ("", ""), ("x", "")] {
            let g = Generation::new(id, token);
            assert_eq!(Generation::from_key(&g.key()), Some(g));
        }
        assert_ne!(
            Generation::new("a:b", "c").key(),
            Generation::new("a", "b:c").key()
        );
    }

    #[test]
    fn claim_keys_are_gos_id_nul_token_and_round_trip() {
        assert_eq!(Generation::new("a", "t").claim_key(), "a\0t");
        assert_eq!(Generation::new("a", "").claim_key(), "a");
        for (id, token) in [
            ("a", "b"),
            ("a:b", "c"),
            ("3:a", "b:c"),
            ("x", ""),
            ("~", ""),
        ] {
            let g = Generation::new(id, token);
            assert_eq!(Generation::from_claim_key(&g.claim_key()), g);
        }
        assert_ne!(
            Generation::new("a", "").claim_key(),
            Generation::new("a", "0").claim_key()
        );
    }

    #[test]
    fn malformed_generation_keys_are_refused() {
        for key in ["", "x", "5:ab:c", "1:ab", "z:a:b"] {
            assert_eq!(Generation::from_key(key), None, "{key}");
        }
    }

    #[test]
    fn scores_order_totally_and_convert_to_millis() {
        assert!(Score(1.0) < Score(2.0));
        assert_eq!(Score(1.5).as_millis(), Millis(1500));
        assert_eq!(Score(-3.0).as_millis(), Millis(0));
        assert_eq!(Millis(1234).as_score(), Score(1.234));
    }

    #[test]
    fn member_debug_never_prints_a_whole_payload() {
        let m = Member::from(vec![b'x'; 1000]);
        assert!(format!("{m:?}").len() < 120);
    }
}
