//! W3C trace context passed through to the gateway: `traceparent` and `tracestate` read from the request's `data.metadata`, as the Go processor's propagator reads them, checked, and set on the gateway call.
//!
//! Go extracts the context from `data.metadata` only when its OpenTelemetry
//! exporter is configured (its default propagator does nothing); we pass it
//! through always, so a producer's trace reaches the gateway whether or not
//! this processor exports spans of its own.
//!
//! The values are the producer's, so they are checked before they become
//! headers: a `traceparent` must be the W3C form (`version-traceid-parentid-
//! flags` in lowercase hex, version not `ff`, ids not all zero; version `00`
//! exactly 55 characters, a later version at least that and followed by `-`
//! when longer); anything else is ignored and the member's own headers are
//! left as they are. `tracestate` goes only beside a valid `traceparent`,
//! and only when it is a legal header value of at most
//! [`MAX_TRACESTATE`] bytes. A valid context replaces any `traceparent` /
//! `tracestate` the member's `data.headers` gave (the metadata is where the
//! producer's tracing library puts it, as in Go, where the propagator's
//! inject overwrites the headers).

use reqwest::header::{HeaderMap, HeaderValue};
use std::collections::BTreeMap;

/// The header (and metadata key) of the W3C trace parent.
pub const TRACEPARENT: &str = "traceparent";
/// The header (and metadata key) of the W3C trace state.
pub const TRACESTATE: &str = "tracestate";
/// The longest `tracestate` forwarded: W3C asks propagators to keep at least
/// 512 characters; 32 list members of the maximum size fit in 8,192.
pub const MAX_TRACESTATE: usize = 8192;

/// Sets `traceparent` (and `tracestate`) on `headers` from `metadata` when
/// its `traceparent` is valid; changes nothing otherwise.
pub fn stamp(headers: &mut HeaderMap, metadata: &BTreeMap<String, String>) {
    let Some(parent) = metadata.get(TRACEPARENT).filter(|p| valid_traceparent(p)) else {
        return;
    };
    let Ok(parent) = HeaderValue::from_str(parent) else {
        return;
    };
    headers.insert(TRACEPARENT, parent);
    headers.remove(TRACESTATE);
    let state = metadata
        .get(TRACESTATE)
        .filter(|s| !s.is_empty() && s.len() <= MAX_TRACESTATE)
        .and_then(|s| HeaderValue::from_str(s).ok());
    if let Some(state) = state {
        headers.insert(TRACESTATE, state);
    }
}

/// Whether `value` is a W3C `traceparent` this processor may forward.
pub fn valid_traceparent(value: &str) -> bool {
    let b = value.as_bytes();
    if b.len() < 55 || (b.len() > 55 && b[55] != b'-') {
        return false;
    }
    let dashes = b[2] == b'-' && b[35] == b'-' && b[52] == b'-';
    let (version, trace, parent, flags) = (&b[..2], &b[3..35], &b[36..52], &b[53..55]);
    let fields = [version, trace, parent, flags];
    let hex = fields.iter().all(|f| {
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
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn metadata(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_valid_traceparent_and_its_tracestate_replace_the_members_headers() {
        let mut headers = HeaderMap::new();
        headers.insert(TRACEPARENT, HeaderValue::from_static("spoofed"));
        headers.insert(TRACESTATE, HeaderValue::from_static("old=1"));
        stamp(
            &mut headers,
            &metadata(&[(TRACEPARENT, GOOD), (TRACESTATE, "congo=t61rcWkgMzE")]),
        );
        assert_eq!(headers.get_all(TRACEPARENT).iter().count(), 1);
        assert_eq!(headers[TRACEPARENT], GOOD);
        assert_eq!(headers[TRACESTATE], "congo=t61rcWkgMzE");
    }

    #[test]
    fn a_tracestate_without_a_valid_traceparent_is_not_sent_and_the_members_headers_stay() {
        let mut headers = HeaderMap::new();
        headers.insert(TRACEPARENT, HeaderValue::from_static("members-own"));
        stamp(&mut headers, &metadata(&[(TRACESTATE, "congo=1")]));
        stamp(
            &mut headers,
            &metadata(&[(TRACEPARENT, "nonsense"), (TRACESTATE, "congo=1")]),
        );
        assert_eq!(headers[TRACEPARENT], "members-own");
        assert!(headers.get(TRACESTATE).is_none());
    }

    #[test]
    fn malformed_traceparents_are_refused() {
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
            let mut headers = HeaderMap::new();
            stamp(&mut headers, &metadata(&[(TRACEPARENT, value)]));
            assert!(headers.is_empty(), "{value:?} was sent");
        }
        assert!(valid_traceparent(GOOD));
        assert!(valid_traceparent(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future"
        ));
    }

    #[test]
    fn a_tracestate_that_is_too_long_or_not_a_header_value_is_dropped() {
        for state in [
            "a=1\nb=2".to_owned(),
            "k=".to_owned() + &"v".repeat(MAX_TRACESTATE),
        ] {
            let mut headers = HeaderMap::new();
            stamp(
                &mut headers,
                &metadata(&[(TRACEPARENT, GOOD), (TRACESTATE, &state)]),
            );
            assert_eq!(headers[TRACEPARENT], GOOD);
            assert!(headers.get(TRACESTATE).is_none(), "{state:?}");
        }
    }
}
