//! The W3C trace context a producer put in a request's `data.metadata` (`traceparent`, `tracestate`, where the Go producer's OpenTelemetry propagator writes them), and which of its values this processor may use.
//!
//! The values are the producer's, so they are checked before they become
//! headers or a span's parent: a `traceparent` must be the W3C form
//! (`version-traceid-parentid-flags` in lowercase hex, version not `ff`,
//! ids not all zero; version `00` exactly 55 characters, a later version at
//! least that and followed by `-` when longer). A `tracestate` is used only
//! beside a valid `traceparent`, and only when it is non-empty, at most
//! [`MAX_TRACESTATE`] bytes and printable ASCII (a legal header value).

use std::collections::BTreeMap;

/// The metadata key (and header) of the W3C trace parent.
pub const TRACEPARENT: &str = "traceparent";
/// The metadata key (and header) of the W3C trace state.
pub const TRACESTATE: &str = "tracestate";
/// The longest `tracestate` used: W3C asks propagators to keep at least 512
/// characters; 32 list members of the maximum size fit in 8,192.
pub const MAX_TRACESTATE: usize = 8192;

/// The request's `traceparent`, when it is valid.
pub fn parent(metadata: &BTreeMap<String, String>) -> Option<&str> {
    metadata
        .get(TRACEPARENT)
        .map(String::as_str)
        .filter(|p| valid_traceparent(p))
}

/// The request's `tracestate`, when it may go beside its valid `traceparent`.
pub fn state(metadata: &BTreeMap<String, String>) -> Option<&str> {
    parent(metadata)?;
    let state = metadata.get(TRACESTATE)?;
    let printable = state
        .bytes()
        .all(|c| c == b'\t' || (b' '..=b'~').contains(&c));
    (!state.is_empty() && state.len() <= MAX_TRACESTATE && printable).then_some(state.as_str())
}

/// Whether `value` is a W3C `traceparent` this processor may use.
pub fn valid_traceparent(value: &str) -> bool {
    let b = value.as_bytes();
    if b.len() < 55 || (b.len() > 55 && b[55] != b'-') {
        return false;
    }
    let dashes = b[2] == b'-' && b[35] == b'-' && b[52] == b'-';
    let (version, trace, parent, flags) = (&b[..2], &b[3..35], &b[36..52], &b[53..55]);
    let hex = [version, trace, parent, flags].iter().all(|f| {
        f.iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
    });
    let zero = |f: &[u8]| f.iter().all(|c| *c == b'0');
    dashes
        && hex
        && version != b"ff"
        && (version != b"00" || b.len() == 55)
        && !zero(trace)
        && !zero(parent)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A W3C example `traceparent`.
    pub(crate) const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    /// A request's metadata holding `pairs`.
    pub(crate) fn metadata(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn malformed_traceparents_are_refused_and_w3c_ones_of_any_version_but_ff_accepted() {
        let bad = [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\nX-Evil: 1",
        ];
        for value in bad {
            assert!(!valid_traceparent(value), "{value:?} was accepted");
            assert_eq!(parent(&metadata(&[(TRACEPARENT, value)])), None);
        }
        assert!(valid_traceparent(GOOD));
        assert!(valid_traceparent(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future"
        ));
    }

    #[test]
    fn a_tracestate_is_used_only_beside_a_valid_parent_and_only_when_short_and_printable() {
        let with = |p: &str, s: &str| metadata(&[(TRACEPARENT, p), (TRACESTATE, s)]);
        assert_eq!(
            state(&with(GOOD, "congo=t61rcWkgMzE")),
            Some("congo=t61rcWkgMzE")
        );
        assert_eq!(state(&with("nonsense", "congo=1")), None);
        assert_eq!(state(&metadata(&[(TRACESTATE, "congo=1")])), None);
        let long = "k=".to_owned() + &"v".repeat(MAX_TRACESTATE);
        for s in ["", "a=1\nb=2", "a=\u{e9}", long.as_str()] {
            assert_eq!(state(&with(GOOD, s)), None, "{s:?}");
        }
    }
}
