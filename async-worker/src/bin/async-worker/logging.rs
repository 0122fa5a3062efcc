//! Where the binary's logs go and how they look: stderr, JSON lines or console text (`--zap-encoder`), at the level `RUST_LOG`, `--zap-log-level` or `LOG_LEVEL` sets.

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

/// Logs to stderr in `format`, at the level [`level_directive`] picks
/// (`zap_level` is `--zap-log-level`, read by [`zap_log_level`]). An
/// unusable `LOG_LEVEL` is logged and ignored. With a `tracer`
/// ([`crate::traces`]), the request and gateway-call spans, and the Redis
/// call spans of `enable_tracing`, also go to it, whatever the log level:
/// its layer has a filter of its own.
pub fn init(
    default: &str,
    zap_level: Option<&'static str>,
    format: LogFormat,
    tracer: Option<SdkTracer>,
) {
    let go_level = std::env::var("LOG_LEVEL").ok().filter(|l| !l.is_empty());
    let from_go = go_level.as_deref().and_then(go_log_level);
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(level_directive(zap_level, from_go, default)));
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
            .with_target("async_worker::gateway", Level::DEBUG)
            .with_target(claim_redis::CALL_SPAN_TARGET, Level::DEBUG);
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(traced)
    });
    tracing_subscriber::registry().with(fmt).with(spans).init();
    if let (Some(level), None, None) = (go_level, from_go, zap_level) {
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

/// The level when `RUST_LOG` does not set one: `--zap-log-level`, which the
/// operator typed (the chart always sets `LOG_LEVEL`, to `info` by
/// default, so the flag must win over it to mean anything), else
/// `LOG_LEVEL`, else the command's `default`.
pub fn level_directive<'a>(
    zap_level: Option<&'a str>,
    log_level: Option<&'a str>,
    default: &'a str,
) -> &'a str {
    zap_level.or(log_level).unwrap_or(default)
}

/// The values `--zap-log-level` accepts, for its error message.
pub const ZAP_LEVELS: &str =
    "debug, info, warn, error, panic, or a whole number from 1 (debug) up (2 and more: trace)";

/// The filter for a `--zap-log-level` value, as Go's zap flag reads it: a
/// level name (any case; `panic` logs errors only, the closest level here),
/// or a number above 0 for zap's debug levels of rising verbosity (1 is
/// debug; every higher one is trace, the most verbose level here). `warn`
/// is accepted too, although Go's flag refuses it.
pub fn zap_log_level(value: &str) -> Option<&'static str> {
    match value.to_ascii_lowercase().as_str() {
        "debug" => Some("debug"),
        "info" => Some("info"),
        "warn" => Some("warn"),
        "error" | "panic" => Some("error"),
        number => match number.parse::<u64>() {
            Ok(1) => Some("debug"),
            Ok(n) if n > 1 => Some("trace"),
            _ => None,
        },
    }
}
