//! The processor's traces end to end: a request whose `data.metadata` carries a producer's `traceparent` reaches the gateway in the same trace, and an OTLP receiver started here gets the request's span (child of the producer's) and the gateway call's (child of the request's, and the parent the gateway saw).

mod common;

use async_worker::test_support::http_stub::HttpStub;
use claim_core::wire::Envelope;
use common::worker::{BINARY, Worker};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::trace::v1::Span;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Long enough for a process on a busy machine to start, serve one request and drain.
const BOUND: Duration = Duration::from_secs(30);

/// The producer's span: trace id and span id in hex.
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PRODUCER_SPAN: &str = "00f067aa0ba902b7";

/// An OTLP/gRPC trace receiver: keeps every span exported to it.
#[derive(Debug, Clone, Default)]
struct Receiver(Arc<Mutex<Vec<Span>>>);

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let spans = request
            .into_inner()
            .resource_spans
            .into_iter()
            .flat_map(|r| r.scope_spans)
            .flat_map(|s| s.spans);
        self.0.lock().unwrap().extend(spans);
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

impl Receiver {
    /// Serves on a loopback port; returns the receiver and its URL.
    async fn start() -> (Receiver, String) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let receiver = Receiver::default();
        let service = TraceServiceServer::new(receiver.clone());
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        (receiver, url)
    }

    /// The spans named `name` received so far.
    fn named(&self, name: &str) -> Vec<Span> {
        let spans = self.0.lock().unwrap();
        spans.iter().filter(|s| s.name == name).cloned().collect()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test]
async fn a_producers_trace_reaches_the_gateway_through_the_request_and_gateway_call_spans_an_otlp_receiver_gets()
 {
    let Some((_server, url, mut conn)) = common::server_and_conn().await else {
        return;
    };
    let gateway = HttpStub::start(Arc::new(|_| (200, r#"{"ok":true}"#.to_owned())))
        .await
        .unwrap();
    let (receiver, otlp) = Receiver::start().await;

    // enable_tracing: a span per Redis call besides the request's.
    let config = serde_json::json!({
        "url": url,
        "enable_tracing": true,
        "queues": [{"queue_name": common::QUEUE, "igw_base_url": gateway.url()}],
    });
    let mut command = Command::new(BINARY);
    command
        .args(["--transport-config", &config.to_string()])
        .args(["--metrics-port", "0", "--health-port", "0"])
        .args(["--drain-timeout", "5s"])
        .env_remove("REDIS_URL")
        .env_remove("RUST_LOG")
        .env_remove("OTEL_EXPORTER_OTLP_PROTOCOL")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &otlp)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100");
    let mut worker = Worker::spawn(command, 0, 0);

    let mut envelope = Envelope::new(
        "traced-1",
        common::token("traced-1"),
        common::unix_now() + 600,
        serde_json::json!({"model": "m", "prompt": "hi"}),
    );
    let parent = format!("00-{TRACE}-{PRODUCER_SPAN}-01");
    envelope.data.metadata.insert("traceparent".into(), parent);
    envelope
        .data
        .metadata
        .insert("tracestate".into(), "congo=t61rcWkgMzE".into());
    common::go_submit_envelope(&mut conn, &envelope).await;
    let record = common::brpop(&url, BOUND).await;
    assert!(record.is_some(), "no record; log:\n{}", worker.log_tail());
    worker.stop_within(BOUND).await;

    let started = Instant::now();
    while receiver.named("http-request").is_empty() && started.elapsed() < BOUND {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let requests = receiver.named("request");
    let calls = receiver.named("http-request");
    assert_eq!(
        (requests.len(), calls.len()),
        (1, 1),
        "log:\n{}",
        worker.log()
    );
    let (request, call) = (&requests[0], &calls[0]);
    assert_eq!(
        hex(&request.trace_id),
        TRACE,
        "the request span is in the producer's trace"
    );
    assert_eq!(hex(&request.parent_span_id), PRODUCER_SPAN);
    assert_eq!(hex(&call.trace_id), TRACE);
    assert_eq!(
        call.parent_span_id, request.span_id,
        "the call is the request's child"
    );

    let seen = gateway.requests();
    assert_eq!(seen.len(), 1);
    let sent = seen[0]
        .header("traceparent")
        .expect("the gateway got a traceparent");
    let want = format!("00-{TRACE}-{}-01", hex(&call.span_id));
    assert_eq!(sent, want, "the gateway's parent is the call's span");
    assert_eq!(seen[0].header("tracestate"), Some("congo=t61rcWkgMzE"));

    // The Redis calls: a claim or an ack serves a batch of requests, and
    // runs outside every request's span (the claim before it starts, the
    // ack in the writer), so each call's span is a root of its own.
    let redis = receiver.named("redis");
    let script = |name: &str| {
        redis
            .iter()
            .find(|s| attribute(s, "db.operation").as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no {name} span among {}", redis.len()))
    };
    for span in [script("claim"), script("ack")] {
        assert_eq!(attribute(span, "db.system").as_deref(), Some("redis"));
        assert_eq!(attribute(span, "queue").as_deref(), Some(common::QUEUE));
        assert!(span.parent_span_id.is_empty(), "a root: {span:?}");
        assert_ne!(hex(&span.trace_id), TRACE, "not in one request's trace");
    }
}

/// A span's string attribute `key`.
fn attribute(span: &Span, key: &str) -> Option<String> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    let value = span
        .attributes
        .iter()
        .find(|a| a.key == key)?
        .value
        .as_ref()?;
    match value.value.as_ref()? {
        Value::StringValue(s) => Some(s.clone()),
        _ => None,
    }
}

#[test]
fn an_otlp_protocol_it_cannot_export_with_stops_the_start_naming_the_variable_and_the_choices() {
    let output = Command::new(BINARY)
        .args([
            "--redis-url",
            "redis://127.0.0.1:1",
            "--igw-base-url",
            "http://127.0.0.1:1",
        ])
        .args(["--metrics-port", "0", "--health-port", "0"])
        .env_remove("REDIS_URL")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL: \"http/json\"")
            && stderr.contains("give grpc or http/protobuf"),
        "{stderr}"
    );
}
