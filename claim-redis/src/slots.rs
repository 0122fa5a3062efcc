//! Redis Cluster hash slots: a key's hash tag, its slot (CRC16-XMODEM mod 16384), and the check that a call's keys share one slot.
//!
//! Redis Cluster hashes a key by its hash tag, the text between the first
//! `{` and the first `}` after it when that text is non-empty, else by the
//! whole key; the slot is CRC16-XMODEM (poly 0x1021, init 0) of it, mod
//! 16384. A script or multi-key command whose keys span two slots is
//! refused by a cluster (`CROSSSLOT`). [`check_one_slot`] refuses it
//! before it is sent, naming the keys and their slots, so a store with the
//! hash-tagged layout proves on a plain standalone server that every call
//! it makes would run on a cluster.

use claim_core::{Op, StoreError};

/// Slots in a Redis Cluster.
pub const SLOTS: u16 = 16384;

/// CRC16-XMODEM of `bytes` (poly 0x1021, init 0, no reflection).
pub fn crc16(bytes: &[u8]) -> u16 {
    ::crc16::State::<::crc16::XMODEM>::calculate(bytes)
}

/// The part of `key` Redis Cluster hashes: the text between the first `{`
/// and the first `}` after it, if non-empty; else the whole key.
pub fn hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{')
        && let Some(len) = key[open + 1..].iter().position(|&b| b == b'}')
        && len > 0
    {
        return &key[open + 1..open + 1 + len];
    }
    key
}

/// The cluster slot of `key`.
pub fn hash_slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) % SLOTS
}

/// Characters of [`slot_tag`]s: letters and digits, so a tag holds no brace.
const TAG_ALPHABET: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// A short tag of letters and digits that hashes to `slot` (the first in
/// length-then-alphabet order): `{<tag>}` puts a key in `slot` whatever
/// follows it. Every slot has one of at most three characters (checked by
/// a unit test); the table is built once, on first use.
pub fn slot_tag(slot: u16) -> &'static str {
    static TAGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let tags = TAGS.get_or_init(|| {
        let mut tags = vec![String::new(); usize::from(SLOTS)];
        let mut left = usize::from(SLOTS);
        let mut candidate: Vec<u8> = Vec::new();
        'search: for len in 1..=3 {
            candidate.resize(len, 0);
            let total = TAG_ALPHABET.len().pow(len as u32);
            for n in 0..total {
                let mut rest = n;
                for c in candidate.iter_mut().rev() {
                    *c = TAG_ALPHABET[rest % TAG_ALPHABET.len()];
                    rest /= TAG_ALPHABET.len();
                }
                let tag = &mut tags[usize::from(crc16(&candidate) % SLOTS)];
                if tag.is_empty() {
                    *tag = String::from_utf8(candidate.clone()).expect("ASCII");
                    left -= 1;
                    if left == 0 {
                        break 'search;
                    }
                }
            }
        }
        tags
    });
    &tags[usize::from(slot % SLOTS)]
}

/// A hash tag `{<tag>}` can carry to put a key in `key`'s slot: `key`'s
/// own tag by Redis's rule when it is non-empty and holds no `}` (always
/// so for a real tag; for a key hashed whole, unless it holds a `}` or is
/// empty), else the [`slot_tag`] of `key`'s slot. Either way
/// `hash_slot(b"{" + tag + b"}" + anything) == hash_slot(key)`.
pub fn carried_tag(key: &str) -> &str {
    let tag = hash_tag(key.as_bytes());
    match std::str::from_utf8(tag) {
        // The tag is cut at ASCII braces, so it is valid UTF-8.
        Ok(tag) if !tag.is_empty() && !tag.contains('}') => tag,
        _ => slot_tag(hash_slot(key.as_bytes())),
    }
}

/// `Ok` when every key lies in one slot; else a rejection of the call
/// (`op`, what it is) naming each key and its slot. A call without keys
/// passes.
pub(crate) fn check_one_slot<'k>(
    op: Op,
    what: &str,
    keys: impl IntoIterator<Item = &'k [u8]> + Clone,
) -> Result<(), StoreError> {
    let mut slots = keys.clone().into_iter().map(hash_slot);
    let Some(first) = slots.next() else {
        return Ok(());
    };
    if slots.all(|s| s == first) {
        return Ok(());
    }
    let named: Vec<String> = keys
        .into_iter()
        .map(|k| format!("\"{}\" (slot {})", String::from_utf8_lossy(k), hash_slot(k)))
        .collect();
    Err(StoreError::rejected(
        op,
        format!(
            "{what} would cross Redis Cluster slots: its keys {} do not share one slot; \
             with the hash-tagged key layout every key of a call must hash to one slot: \
             a queue name holding `}}` or an empty `{{}}` but no hash tag cannot be served \
             (rename it or give it a hash tag, see Keys::queue_refusal); otherwise this is \
             a bug in the store's key layout, please report it",
            named.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_equal_the_values_redis_cluster_keyslot_answers() {
        // `redis-cli CLUSTER KEYSLOT <key>` on a cluster-enabled server.
        for (key, slot) in [
            ("foo", 12182),
            ("bar", 5061),
            ("{user1000}.following", 3443),
            ("{user1000}.followers", 3443),
            ("user1000", 3443),
            ("request-sortedset", 765),
            ("", 0),
        ] {
            assert_eq!(hash_slot(key.as_bytes()), slot, "{key}");
        }
    }

    #[test]
    fn crc16_is_xmodem() {
        // The CRC-16/XMODEM check value.
        assert_eq!(crc16(b"123456789"), 0x31C3);
    }

    #[test]
    fn a_hash_tag_is_the_first_non_empty_braced_text_else_the_whole_key() {
        assert_eq!(hash_tag(b"{a}b"), b"a");
        assert_eq!(hash_tag(b"x{a}{b}"), b"a");
        assert_eq!(hash_tag(b"{}a"), b"{}a");
        assert_eq!(hash_tag(b"a{b"), b"a{b");
        assert_eq!(hash_tag(b"{{a}}"), b"{a");
        assert_eq!(hash_tag(b"plain"), b"plain");
        assert_eq!(hash_tag(b"{}{a}"), b"{}{a}");
    }

    #[test]
    fn every_slot_has_a_tag_of_at_most_three_letters_or_digits_that_hashes_to_it() {
        for slot in 0..SLOTS {
            let tag = slot_tag(slot);
            assert!(
                (1..=3).contains(&tag.len()) && tag.bytes().all(|b| b.is_ascii_alphanumeric()),
                "{slot}: {tag:?}"
            );
            assert_eq!(hash_slot(format!("{{{tag}}}:x").as_bytes()), slot, "{tag}");
        }
    }

    #[test]
    fn a_carried_tag_puts_any_key_after_it_in_the_slot_of_the_key_it_was_taken_from() {
        for key in [
            "a}b", "{}x", "x{y", "}{", "{a}}", "{}{a}", "{", "}", "", "{{}}", "{}", "}}{{",
            "plain", "{t}.r", "x{}y{z}", "é}ü", "p:{a", "p:a}{b}",
        ] {
            let tag = carried_tag(key);
            assert!(!tag.is_empty() && !tag.contains('}'), "{key:?}: {tag:?}");
            let carried = format!("result-terminal:{{{tag}}}:5:i{{d}}:t}}");
            assert_eq!(
                hash_slot(carried.as_bytes()),
                hash_slot(key.as_bytes()),
                "{key:?} -> {carried:?}"
            );
        }
        assert_eq!(carried_tag("{t}.r"), "t");
        assert_eq!(carried_tag("result-list"), "result-list");
        assert_eq!(carried_tag("x{y"), "x{y");
    }

    #[test]
    fn a_call_whose_keys_cross_slots_is_refused_naming_each_key_and_slot() {
        let keys: [&[u8]; 2] = [b"{q}:claimed", b"foo"];
        let err = check_one_slot(Op::Claim, "claim.lua", keys).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("\"{q}:claimed\" (slot") && text.contains("\"foo\" (slot 12182)"),
            "{text}"
        );
        assert!(!err.is_transient(), "{err:?}");
        let same: [&[u8]; 3] = [b"q", b"{q}:claimed", b"x{q}y"];
        assert!(check_one_slot(Op::Claim, "claim.lua", same).is_ok());
        assert!(check_one_slot(Op::Claim, "claim.lua", std::iter::empty::<&[u8]>()).is_ok());
    }
}
