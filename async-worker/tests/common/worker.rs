//! The harness of the process tests (process, poison_process, payload_refs_process, chart_argv_process, chart_overlay_process, chart_queries, deploy_rules, status_page, mixed_fleet): one `async-worker` process, its log, signals and its /metrics page.

use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The binary under test.
pub const BINARY: &str = env!("CARGO_BIN_EXE_async-worker");
/// The drain timeout every process gets unless a test says otherwise.
pub const DRAIN: Duration = Duration::from_secs(10);

/// One `async-worker` process; SIGKILLed on drop if still running.
pub struct Worker {
    child: Child,
    metrics_port: u16,
    health_port: u16,
    log: PathBuf,
}

impl Worker {
    /// Starts the processor on the default queue with a short lease and
    /// reclaim interval and the standard drain timeout, logging to a file of its own.
    pub fn start(redis_url: &str, gateway: &str, lease: &str) -> Worker {
        Worker::start_draining(redis_url, gateway, lease, &format!("{}s", DRAIN.as_secs()))
    }

    /// The same with the drain timeout `drain` (Go syntax).
    pub fn start_draining(redis_url: &str, gateway: &str, lease: &str, drain: &str) -> Worker {
        Worker::start_with(redis_url, gateway, lease, drain, &[])
    }

    /// The same with `extra` flags after the standard ones.
    pub fn start_with(
        redis_url: &str,
        gateway: &str,
        lease: &str,
        drain: &str,
        extra: &[&str],
    ) -> Worker {
        #[rustfmt::skip]
        let standard = [
            "--igw-base-url", gateway,
            "--claim-lease-ttl", lease,
            "--claim-reclaim-interval", "500ms",
            "--drain-timeout", drain,
            "--concurrency", "16",
        ];
        let flags: Vec<&str> = standard.iter().chain(extra).copied().collect();
        Worker::start_flags(redis_url, &flags)
    }

    /// Starts the processor on `redis_url` with only `flags` besides its
    /// own metrics and health ports (a test that sets `--concurrency` or
    /// the lease itself), logging to a file of its own.
    pub fn start_flags(redis_url: &str, flags: &[&str]) -> Worker {
        let metrics_port = super::free_port();
        let health_port = super::free_port();
        #[rustfmt::skip]
        let args = [
            "--redis-url", redis_url,
            "--metrics-port", &metrics_port.to_string(),
            "--health-port", &health_port.to_string(),
            "--bind-address", "127.0.0.1",
        ];
        let mut command = Command::new(BINARY);
        command
            .args(args)
            .args(flags)
            .env_remove("REDIS_URL")
            .env("RUST_LOG", "info");
        Worker::spawn(command, metrics_port, health_port)
    }

    /// Starts `command` (the binary with the caller's argv and environment,
    /// serving metrics and health on the ports given), logging to a file of its own.
    pub fn spawn(mut command: Command, metrics_port: u16, health_port: u16) -> Worker {
        // The tests read the log as text (`owner=…`, `index=0`); stderr is a
        // file, so without a choice the worker would write JSON lines.
        let chosen = command
            .get_args()
            .any(|a| a.to_string_lossy().starts_with("--zap-encoder"));
        if !chosen {
            command.arg("--zap-encoder=console");
        }
        Worker::spawn_exact(command, metrics_port, health_port)
    }

    /// [`Worker::spawn`] with `command`'s argv as it is (no
    /// `--zap-encoder` added: the log is JSON lines, stderr being a file),
    /// for a test that runs the argv a chart renders, exactly.
    pub fn spawn_exact(mut command: Command, metrics_port: u16, health_port: u16) -> Worker {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, Ordering::Relaxed);
        let log = std::env::temp_dir().join(format!(
            "async-worker-process-test-{}-{n}.log",
            std::process::id()
        ));
        let out = File::create(&log).expect("create the worker log");
        let child = command
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("clone the log handle"))
            .stderr(out)
            .spawn()
            .expect("start async-worker");
        Worker {
            child,
            metrics_port,
            health_port,
            log,
        }
    }

    /// Sends a signal by name (`TERM`, `KILL`) to this process only.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{name} {}", self.child.id());
    }

    /// Waits (polling) for the process to exit; fails after `bound`.
    pub async fn exit_within(&mut self, bound: Duration) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                started.elapsed() < bound,
                "the worker did not exit within {bound:?}; log tail:\n{}",
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Sends SIGTERM and asserts the process exits 0 within `bound`.
    pub async fn stop_within(&mut self, bound: Duration) {
        self.signal("TERM");
        assert!(self.exit_within(bound).await.success());
    }

    /// The whole log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// `GET /metrics` over a raw TCP connection (the demo's scraper); the answer.
    pub async fn metrics(&self) -> String {
        let response = async_worker::test_support::scrape(self.metrics_port)
            .await
            .expect("scrape the metrics port");
        let status = response.lines().next().unwrap_or_default();
        assert!(status.contains(" 200 "), "metrics answer: {response}");
        response
    }

    /// The port `/healthz`, `/readyz` and `/status` listen on.
    pub fn health_port(&self) -> u16 {
        self.health_port
    }

    /// The owner token the process logged at start, once it has.
    pub fn owner_token(&self) -> Option<String> {
        let log = self.log();
        let line = log
            .lines()
            .find(|l| l.contains("claims are held under this owner token"))?;
        let token = line.split("owner=").nth(1)?.split_whitespace().next()?;
        Some(token.trim_matches('"').to_owned())
    }

    /// The HTTP status of `GET <path>` on the health port (0 when it does not answer).
    pub async fn health_status(&self, path: &str) -> u16 {
        self.health_status_at(std::net::Ipv4Addr::LOCALHOST.into(), path)
            .await
    }

    /// [`Worker::health_status`] on the health port of `host`.
    pub async fn health_status_at(&self, host: std::net::IpAddr, path: &str) -> u16 {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let answer = async {
            let mut stream = tokio::net::TcpStream::connect((host, self.health_port)).await?;
            let request = format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n");
            stream.write_all(request.as_bytes()).await?;
            let mut response = String::new();
            stream.read_to_string(&mut response).await?;
            std::io::Result::Ok(response)
        };
        match tokio::time::timeout(Duration::from_secs(2), answer).await {
            Ok(Ok(response)) => response
                .split(' ')
                .nth(1)
                .and_then(|code| code.parse().ok())
                .unwrap_or(0),
            _ => 0,
        }
    }

    /// `GET /metrics` once the endpoint listens (it starts after Redis connects).
    pub async fn metrics_when_up(&self) -> String {
        super::eventually(
            "the metrics endpoint",
            Duration::from_secs(10),
            async || {
                tokio::net::TcpStream::connect(("127.0.0.1", self.metrics_port))
                    .await
                    .is_ok()
            },
        )
        .await;
        self.metrics().await
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if std::thread::panicking() {
            eprintln!("worker log kept: {}", self.log.display());
        } else {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// Whether a metric has a sample line (not only HELP/TYPE) in the page.
pub fn has_sample(page: &str, name: &str) -> bool {
    page.lines()
        .any(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
}
