//! Where the binary's logs go and how they look: stderr, JSON lines or console text (`--zap-encoder`), at the level `RUST_LOG` or `LOG_LEVEL` sets.

use std::io::IsTerminal;

use opentelemetry_sdk::trace::SdkTracer;
use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry, fmt};

/// How each log line is written: Go's zap encoders, by their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line: `timestamp`, `level`, `target`, `message`,
    /// the event's fields beside them, and the request's span (`span`).
    Json,
    /// Human-readable text, coloured on a terminal.
    Console,
}

/// The encoders `--zap-encoder` accepts, as Go's zap names them.
pub const ENCODERS: &str = "json, console";

impl LogFormat {
    /// Reads a `--zap-encoder` value.
    pub fn from_encoder(name: &str) -> Option<Self> {
        match name {
            "json" => Some(LogFormat::Json),
            "console" => Some(LogFormat::Console),
            _ => None,
        }
    }

    /// The format without `--zap-encoder`: console on a terminal, else JSON
    /// (what a log collector reads), as Go's default is JSON.
    pub fn for_stderr() -> Self {
        if std::io::stderr().is_terminal() {
            LogFormat::Console
        } else {
            LogFormat::Json
        }
    }
}

/// Logs to stderr in `format`. `RUST_LOG` (an env-filter directive) wins;
/// else the Go processor's `LOG_LEVEL` (`error`, `warn`, `info`, `debug`;
/// the chart sets it); else `default`. An unusable `LOG_LEVEL` is logged
/// and ignored. With a `tracer` ([`crate::traces`]), the request and
/// gateway-call spans also go to it, whatever the log level: its layer
/// has a filter of its own.
pub fn init(default: &str, format: LogFormat, tracer: Option<SdkTracer>) {
    let go_level = std::env::var("LOG_LEVEL").ok().filter(|l| !l.is_empty());
    let from_go = go_level.as_deref().and_then(go_log_level);
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(from_go.unwrap_or(default)));
    let fmt = fmt::layer().with_writer(std::io::stderr);
    let fmt: Box<dyn Layer<Registry> + Send + Sync> = match format {
        LogFormat::Json => fmt
            .json()
            // Fields beside `message` at the top, as zap writes them; the
            // request's span (queue, id, generation) under `span`.
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .with_filter(filter)
            .boxed(),
        LogFormat::Console => fmt
            .with_ansi(std::io::stderr().is_terminal())
            .with_filter(filter)
            .boxed(),
    };
    let spans = tracer.map(|tracer| {
        let traced = Targets::new()
            .with_target("async_worker::request", Level::DEBUG)
            .with_target("async_worker::gateway", Level::DEBUG);
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(traced)
    });
    tracing_subscriber::registry().with(fmt).with(spans).init();
    if let (Some(level), None) = (go_level, from_go) {
        tracing::warn!(
            "LOG_LEVEL {level:?} is not a level this processor knows (error, warn, info, debug); using {default:?}"
        );
    }
}

/// The filter for a Go `LOG_LEVEL` value.
fn go_log_level(level: &str) -> Option<&'static str> {
    match level.to_ascii_lowercase().as_str() {
        "error" | "dpanic" | "panic" | "fatal" => Some("error"),
        "warn" | "warning" => Some("warn"),
        "info" => Some("info"),
        "debug" => Some("debug"),
        "trace" => Some("trace"),
        _ => None,
    }
}
