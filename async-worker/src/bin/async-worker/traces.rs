//! OpenTelemetry traces of the processor: an OTLP exporter configured by the standard `OTEL_*` variables, the W3C propagator, and the tracer the log subscriber's OpenTelemetry layer writes to.
//!
//! On when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`
//! is set (as Go's `InitTracer`), unless `OTEL_SDK_DISABLED=true` or
//! `OTEL_TRACES_EXPORTER=none`. The protocol is `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`,
//! else `OTEL_EXPORTER_OTLP_PROTOCOL`, else `grpc` (the Go processor's
//! exporter, so a collector address a Go deployment set keeps working);
//! `http/protobuf` is the other. The exporter reads the rest itself
//! (endpoint, headers, timeout; `OTEL_BSP_*` for the batching). The service
//! is `OTEL_SERVICE_NAME`, else `llm-d-async` (Go's name).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

/// Go's service name.
const SERVICE: &str = "llm-d-async";

/// The running exporter; [`Traces::shutdown`] flushes what is batched.
#[derive(Debug)]
pub struct Traces {
    provider: SdkTracerProvider,
    /// Where spans go, for the start line.
    pub endpoint: String,
    pub protocol: &'static str,
}

impl Traces {
    /// The exporter the environment asks for, or `None` when it asks for
    /// none. Must run inside the tokio runtime (the gRPC channel is one of
    /// its tasks).
    pub fn from_env() -> Result<Option<(Traces, SdkTracer)>, String> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let endpoint = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT"));
        let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v == "none");
        let Some(endpoint) = endpoint.filter(|_| !disabled) else {
            return Ok(None);
        };
        let (name, asked) = match var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") {
            Some(p) => ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", p),
            None => (
                "OTEL_EXPORTER_OTLP_PROTOCOL",
                var("OTEL_EXPORTER_OTLP_PROTOCOL").unwrap_or_else(|| "grpc".into()),
            ),
        };
        let (protocol, exporter) = match asked.as_str() {
            "grpc" => ("grpc", SpanExporter::builder().with_tonic().build()),
            "http/protobuf" => (
                "http/protobuf",
                SpanExporter::builder()
                    .with_http()
                    .with_protocol(Protocol::HttpBinary)
                    .build(),
            ),
            other => {
                return Err(format!(
                    "{name}: {other:?} is not a protocol this processor exports with; give grpc or http/protobuf (or unset it: grpc, as the Go processor)"
                ));
            }
        };
        let exporter =
            exporter.map_err(|e| format!("OTEL_EXPORTER_OTLP_ENDPOINT {endpoint:?}: {e}"))?;
        let mut resource = Resource::builder();
        if var("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name(SERVICE);
        }
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build();
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        let tracer = provider.tracer(SERVICE);
        let traces = Traces {
            provider,
            endpoint,
            protocol,
        };
        Ok(Some((traces, tracer)))
    }

    /// Exports what is still batched and stops the exporter; a failure is
    /// logged (the spans are lost, nothing else).
    pub fn shutdown(self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!(error = %e, "the last spans could not be exported");
        }
    }
}
