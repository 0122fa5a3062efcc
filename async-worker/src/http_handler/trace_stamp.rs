//! The trace context on the gateway call: the producer's `traceparent` and `tracestate` ([`crate::trace_context`]) passed through, or, with an OpenTelemetry layer installed (`otel`), the gateway call's own span as the parent the gateway sees.
//!
//! Go extracts the context from `data.metadata` only when its exporter is
//! configured (its default propagator does nothing); we pass it through
//! always, so a producer's trace reaches the gateway whether or not this
//! processor exports spans. A valid context replaces any `traceparent` /
//! `tracestate` the member's `data.headers` gave (the metadata is where the
//! producer's tracing library puts it; in Go the propagator's inject
//! overwrites the headers); an invalid one changes nothing.

use crate::trace_context::{self, TRACEPARENT, TRACESTATE};
use reqwest::header::{HeaderMap, HeaderValue};
use std::collections::BTreeMap;

/// Sets `traceparent` (and `tracestate`) on `headers` from `metadata` when
/// its `traceparent` is valid; changes nothing otherwise.
pub fn stamp(headers: &mut HeaderMap, metadata: &BTreeMap<String, String>) {
    let Some(parent) = trace_context::parent(metadata) else {
        return;
    };
    let Ok(parent) = HeaderValue::from_str(parent) else {
        return;
    };
    headers.insert(TRACEPARENT, parent);
    headers.remove(TRACESTATE);
    let state = trace_context::state(metadata).and_then(|s| HeaderValue::from_str(s).ok());
    if let Some(state) = state {
        headers.insert(TRACESTATE, state);
    }
}

/// The span of one gateway call, a child of the request's. With an
/// OpenTelemetry layer installed, its context replaces the trace headers
/// (the gateway's parent is this call); without one the span is disabled
/// and `headers` keep what [`stamp`] set.
#[cfg(feature = "otel")]
pub fn gateway_span(headers: &mut HeaderMap) -> tracing::Span {
    use opentelemetry::propagation::Injector;
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    struct Headers<'a>(&'a mut HeaderMap);
    impl Injector for Headers<'_> {
        fn set(&mut self, key: &str, value: String) {
            let name = reqwest::header::HeaderName::from_bytes(key.as_bytes());
            if let (Ok(name), Ok(value)) = (name, HeaderValue::from_str(&value)) {
                self.0.insert(name, value);
            }
        }
    }

    let span = tracing::debug_span!(target: "async_worker::gateway", "http-request");
    if span.is_disabled() {
        return span;
    }
    let context = span.context();
    if context.span().span_context().is_valid() {
        headers.remove(TRACESTATE);
        opentelemetry::global::get_text_map_propagator(|p| {
            p.inject_context(&context, &mut Headers(headers))
        });
    }
    span
}

/// Without `otel`: no span of its own.
#[cfg(not(feature = "otel"))]
pub fn gateway_span(_headers: &mut HeaderMap) -> tracing::Span {
    tracing::Span::none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace_context::tests::{GOOD, metadata};

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
    fn an_invalid_context_leaves_the_members_headers_as_they_are() {
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
    fn without_an_opentelemetry_layer_the_gateway_span_keeps_the_passed_through_context() {
        let mut headers = HeaderMap::new();
        stamp(&mut headers, &metadata(&[(TRACEPARENT, GOOD)]));
        let _span = gateway_span(&mut headers);
        assert_eq!(headers[TRACEPARENT], GOOD);
    }
}
