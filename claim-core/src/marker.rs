//! Terminal marker values: the marker's logical expiry and a digest of the record that wrote it.
//!
//! A marker is written with the record it stands for. Keeping a short
//! digest of that record lets an ack that finds a marker tell "my own
//! earlier attempt landed" (same digest: the call timed out after it ran)
//! from "another record answered first" (a different digest: a true
//! duplicate, suppressed). The digest is FNV-1a 64, computed by the client,
//! so the server spends nothing on it; it is stable across builds.

/// A 16-hex-digit digest of a record's bytes (FNV-1a 64).
pub fn record_digest(record: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in record {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The stored value of a marker: `<expiry ms>:<digest>`.
pub fn marker_value(expiry_ms: u64, digest: &str) -> String {
    format!("{expiry_ms}:{digest}")
}

/// The expiry and digest of a stored marker value. A bare number (a marker
/// written before digests existed) has no digest.
pub fn parse_marker(value: &str) -> Option<(u64, Option<&str>)> {
    match value.split_once(':') {
        Some((expiry, digest)) => Some((expiry.parse().ok()?, Some(digest))),
        None => Some((value.parse().ok()?, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_the_fnv1a_values_and_differ_for_different_records() {
        assert_eq!(record_digest(b""), "cbf29ce484222325");
        assert_eq!(record_digest(b"a"), "af63dc4c8601ec8c");
        assert_ne!(record_digest(b"{\"id\":1}"), record_digest(b"{\"id\":2}"));
    }

    #[test]
    fn marker_values_round_trip_and_old_bare_numbers_still_parse() {
        let v = marker_value(1_700_000_000_000, "00ff");
        assert_eq!(parse_marker(&v), Some((1_700_000_000_000, Some("00ff"))));
        assert_eq!(parse_marker("12345"), Some((12345, None)));
        assert_eq!(parse_marker("x:y"), None);
    }
}
