//! OpenTelemetry for the library (`otel`): the request's span continues the producer's trace, read from `data.metadata` through the global propagator the binary installs with its exporter.
//!
//! Without an OpenTelemetry layer in the subscriber the span is disabled
//! and this changes nothing; without the binary's propagator (no exporter
//! configured) the global one is OpenTelemetry's no-op, which reads
//! nothing. Only a valid `traceparent` (and a usable `tracestate`) is
//! offered to the propagator ([`crate::trace_context`]).

use crate::handler::Request;
use crate::trace_context::{self, TRACEPARENT, TRACESTATE};
use opentelemetry::propagation::Extractor;
use std::collections::BTreeMap;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The checked trace context of one request, as the propagator reads it.
struct Checked<'a>(&'a BTreeMap<String, String>);

impl Extractor for Checked<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            TRACEPARENT => trace_context::parent(self.0),
            TRACESTATE => trace_context::state(self.0),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec![TRACEPARENT, TRACESTATE]
    }
}

/// Gives `span` (the request's) the attributes Go's `process-request` span
/// has, and makes the producer's span, when the request's metadata names
/// a valid one, its parent.
pub(crate) fn continue_trace(span: &tracing::Span, request: &Request) {
    if span.is_disabled() {
        return;
    }
    span.set_attribute("request.id", request.generation.id.clone());
    span.set_attribute("queue.id", request.queue_id.clone());
    span.set_attribute("queue.name", request.queue_name.clone());
    span.set_attribute("retry.count", i64::from(request.parsed.retry_count));
    let metadata = &request.parsed.metadata;
    if trace_context::parent(metadata).is_none() {
        return;
    }
    let parent = opentelemetry::global::get_text_map_propagator(|p| p.extract(&Checked(metadata)));
    // An error means the span has started already: it keeps its own root.
    let _ = span.set_parent(parent);
}
