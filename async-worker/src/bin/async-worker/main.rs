//! The `async-worker` binary: the processor (`run`, the default), the `demo` and the operator's `admin` commands.
//!
//! Exit codes: 0 after a clean drain; 1 when Redis is unreachable, the
//! durability contract fails under `--require-durability`, or an endpoint
//! cannot listen; 2 for bad flags or transport config (one line on stderr);
//! 130 when a second SIGTERM/SIGINT cuts the drain short.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use async_worker::Runtime;
use async_worker::runtime::Health;
use async_worker::serve::{self, HealthProbe, Server};
use async_worker::status::StatusSource;
use async_worker::status::route::status_router;
use claim_redis::RedisStore;
use tokio_util::sync::CancellationToken;

use cli::{Cli, Command};
use logging::LogFormat;
use settings::{ProcessorSettings, redact_url};

mod admin;
mod cli;
mod demo;
mod flow;
mod logging;
mod settings;
mod traces;

/// Exit code of a second signal during the drain (128 + SIGINT).
const EXIT_SECOND_SIGNAL: i32 = 130;

/// How long the endpoints get to close after the drain.
const ENDPOINT_STOP: std::time::Duration = std::time::Duration::from_millis(500);

fn main() -> ExitCode {
    let command = Cli::parse_args().into_command();
    let tokio = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("async-worker: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match command {
        Command::Run(args) => match args.resolve() {
            Ok(settings) => tokio.block_on(run(settings)),
            Err(e) => {
                eprintln!("async-worker: {e}");
                ExitCode::from(e.exit_code())
            }
        },
        Command::Demo(args) => {
            logging::init("warn", None, LogFormat::for_stderr(), None);
            // 0 when nothing was lost and every request has exactly one record.
            match tokio.block_on(demo::run(args)) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(e) => {
                    eprintln!("async-worker demo: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Admin(args) => {
            let go = &args.connect.go;
            // A bad encoder or level is refused once the admin command resolves its flags.
            let format = go.zap_encoder.as_deref().and_then(LogFormat::from_encoder);
            let level = go.zap_log_level.as_deref().and_then(logging::zap_log_level);
            let format = format.unwrap_or_else(LogFormat::for_stderr);
            logging::init("warn", level, format, None);
            tokio.block_on(admin::run(args))
        }
        Command::Completions { shell } => {
            let mut command = Cli::full_command();
            clap_complete::generate(shell, &mut command, "async-worker", &mut std::io::stdout());
            ExitCode::SUCCESS
        }
        Command::Man => {
            match clap_mangen::Man::new(Cli::full_command()).render(&mut std::io::stdout()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("async-worker man: cannot write the man page: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// Lets the health endpoints read the runtime's state.
struct RuntimeHealth(Health);

impl HealthProbe for RuntimeHealth {
    fn is_alive(&self) -> bool {
        self.0.is_alive()
    }
    fn is_ready(&self) -> bool {
        self.0.is_ready()
    }
    fn not_ready_because(&self) -> Option<String> {
        self.0.not_ready_because()
    }
}

async fn run(mut settings: ProcessorSettings) -> ExitCode {
    let traces = match traces::Traces::from_env() {
        Ok(traces) => traces,
        Err(e) => {
            eprintln!("async-worker: {e}");
            return ExitCode::from(2);
        }
    };
    let (traces, tracer) = traces.unzip();
    logging::init("info", settings.log_level, settings.log_format, tracer);
    for note in &settings.notes {
        tracing::warn!("{note}");
    }
    if let Some(t) = &traces {
        tracing::info!(endpoint = %t.endpoint, protocol = t.protocol, "exporting OpenTelemetry spans");
    } else if settings.redis_tracing {
        // Spans nothing exports would only cost: off, as Go's chart turns
        // --redis-tracing on only with an endpoint.
        settings.redis_tracing = false;
        tracing::warn!(
            "enable_tracing is on but no spans are exported (set OTEL_EXPORTER_OTLP_ENDPOINT): Redis calls are not traced"
        );
    }
    let code = match serve_until_drained(settings).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    };
    if let Some(traces) = traces {
        // Blocks until the batch is exported: off the runtime's threads.
        let _ = tokio::task::spawn_blocking(move || traces.shutdown()).await;
    }
    code
}

/// The processor from its start line to its drain: the endpoints, the
/// store, the gates and the runtime; the error that kept it from starting.
async fn serve_until_drained(
    settings: ProcessorSettings,
) -> Result<(), Box<dyn std::error::Error>> {
    let queues: Vec<&str> = settings
        .queues
        .iter()
        .map(|q| q.queue_name.as_str())
        .collect();
    // The claim settings as resolved (flag, env, transport config or default).
    let store = &settings.store;
    tracing::info!(
        redis = %redact_url(&settings.redis_url),
        ?queues,
        claim_lease_ttl_ms = store.lease_ttl_ms,
        claim_reclaim_interval_ms = settings.runtime.reclaim_interval.as_millis() as u64,
        result_dedup_ttl_ms = store.result_dedup_ttl_ms,
        max_deliveries = store.max_deliveries,
        replica_acks = settings.replica_acks,
        require_durability = settings.require_durability,
        "starting the processor"
    );

    // Endpoints stop after the runtime has drained, so probes see the drain.
    let endpoints = CancellationToken::new();
    let metrics = match settings.metrics_addr {
        Some(_) => {
            let handle = serve::install_recorder()?;
            async_worker::metrics::describe();
            Some(handle)
        }
        None => None,
    };

    let store = RedisStore::connect(settings.redis_options()).await?;
    check_durability(&store, settings.require_durability).await?;
    // The gates first: the gateway client reports each call to them.
    let gates = flow::FlowGates::build(&settings, &flow::gate_env(&settings))?;
    let handler = flow::handler(&settings, &gates)?;
    let builder = Runtime::builder(Arc::new(store))
        .handler(handler)
        .config(settings.runtime.clone())
        .pod(&pod_name());
    let builder = flow::with_flow(builder, &settings, &gates);
    let runtime = builder.build()?;
    // Operators (and the chaos run) match `<queue>:claim-owners` entries to this process by it.
    tracing::info!(owner = %runtime.owner(), "claims are held under this owner token");
    let probe: Arc<dyn HealthProbe> = Arc::new(RuntimeHealth(runtime.health()));
    let status = StatusSource::of(&runtime);
    let servers = start_endpoints(&settings, metrics, probe, status, &endpoints).await?;
    for server in &servers {
        tracing::info!(addr = %server.local_addr, "serving endpoints");
    }

    let shutdown = CancellationToken::new();
    tokio::spawn(watch_signals(shutdown.clone()));
    let report = runtime.run(shutdown).await;
    tracing::info!(?report, "drained; exiting");
    endpoints.cancel();
    // A prober holding a keep-alive connection must not hold up the exit.
    for server in servers {
        let _ = tokio::time::timeout(ENDPOINT_STOP, server.task).await;
    }
    Ok(())
}

/// This pod's name, for the owner token: `HOSTNAME` (Kubernetes sets it
/// to the pod's name), else the kernel's host name; empty when neither is
/// there (the token then has no pod).
fn pod_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// Warns loudly about each gap in the durability contract; with
/// `--require-durability` a gap (or an unreadable answer) stops the start.
async fn check_durability(store: &RedisStore, required: bool) -> Result<(), String> {
    let problems = match store.check_durability().await {
        Ok(report) => report.problems(),
        Err(e) => vec![format!("cannot check Redis durability: {e}")],
    };
    for problem in &problems {
        if required {
            tracing::error!("DURABILITY: {problem}");
        } else {
            tracing::warn!("DURABILITY: {problem}");
        }
    }
    if required && !problems.is_empty() {
        return Err("refusing to start: --require-durability is set and Redis does not meet the durability contract".into());
    }
    Ok(())
}

/// Starts `/metrics` and the health endpoints with `/status`; one listener when they share a port.
async fn start_endpoints(
    settings: &ProcessorSettings,
    metrics: Option<metrics_exporter_prometheus::PrometheusHandle>,
    probe: Arc<dyn HealthProbe>,
    status: StatusSource,
    stop: &CancellationToken,
) -> Result<Vec<Server>, serve::ServeError> {
    let mut routes: Vec<(SocketAddr, axum::Router)> = Vec::new();
    if let (Some(addr), Some(handle)) = (settings.metrics_addr, metrics) {
        routes.push((addr, serve::metrics_router(handle)));
    }
    if let Some(addr) = settings.health_addr {
        let health = serve::health_router(probe).merge(status_router(status));
        match routes.iter_mut().find(|(a, _)| *a == addr) {
            Some((_, router)) => *router = std::mem::take(router).merge(health),
            None => routes.push((addr, health)),
        }
    }
    let mut servers = Vec::with_capacity(routes.len());
    for (addr, router) in routes {
        servers.push(serve::serve(addr, router, stop.clone()).await?);
    }
    Ok(servers)
}

/// First SIGTERM/SIGINT: drain. Second: exit at once with code 130.
async fn watch_signals(shutdown: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let (mut term, mut int) = match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(term), Ok(int)) => (term, int),
        (Err(e), _) | (_, Err(e)) => {
            tracing::error!("cannot listen for SIGTERM/SIGINT: {e}; stop the process with SIGKILL");
            return;
        }
    };
    // The name of whichever of the two signals arrives next.
    let mut next_signal = async || {
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        }
    };
    let first = next_signal().await;
    tracing::info!(
        signal = first,
        "shutting down: no new claims, draining in-flight work (a second signal exits at once)"
    );
    shutdown.cancel();
    let second = next_signal().await;
    tracing::warn!(
        signal = second,
        "exiting at once: claims still held return to pending when their leases expire"
    );
    std::process::exit(EXIT_SECOND_SIGNAL);
}
