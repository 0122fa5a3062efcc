//! One test `redis-server` process (a cluster node, a sentinel, a TLS server): spawned with given arguments, waited for with a bound, SIGKILLed on drop; plus `redis-cli` calls for setup and polling.

use super::ping::ping;
use super::startup;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a starting process may take to become ready.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(15);

/// How a spawned process shows it is ready.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ready {
    /// Answers PING on its plain port.
    Ping,
    /// Wrote this line to its log (a TLS-only server has no plain port).
    LogLine(&'static str),
}

/// A running `redis-server` (any mode). SIGKILLed on drop; its directory
/// belongs to the caller.
#[derive(Debug)]
pub(crate) struct Process {
    pub port: u16,
    pub dir: PathBuf,
    /// What it was started with, to start it again ([`Process::respawn`]).
    args: Vec<OsString>,
    ready: Ready,
    child: Option<Child>,
}

impl Process {
    /// Spawns a `redis-server` on a free port of 127.0.0.1, with no
    /// persistence and its data and log in `dir`; `mode(port)` gives the
    /// arguments of its kind (cluster node, replica, TLS). Five ports are
    /// tried: one can be taken between the probe and the bind.
    pub(crate) fn spawn_on_free_port(
        dir: &Path,
        ready: Ready,
        mode: impl Fn(u16) -> std::io::Result<Vec<OsString>>,
    ) -> std::io::Result<Process> {
        let mut last = None;
        for _ in 0..5 {
            let port = super::free_port()?;
            let mut args = mode(port)?;
            args.extend([
                os("--bind"),
                os("127.0.0.1"),
                os("--dir"),
                dir.as_os_str().to_owned(),
                os("--save"),
                os(""),
                os("--appendonly"),
                os("no"),
                os("--daemonize"),
                os("no"),
                os("--logfile"),
                dir.join("redis.log").into_os_string(),
            ]);
            match Process::spawn(port, dir, &args, ready) {
                Ok(p) => return Ok(p),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("redis-server did not start")))
    }

    /// Spawns `redis-server <args>` (the log goes to `<dir>/redis.log`) and
    /// waits until it is ready, at most [`READY_TIMEOUT`].
    pub(crate) fn spawn(
        port: u16,
        dir: &Path,
        args: &[OsString],
        ready: Ready,
    ) -> std::io::Result<Process> {
        let mut process = Process {
            port,
            dir: dir.to_owned(),
            args: args.to_vec(),
            ready,
            child: None,
        };
        process.launch(&[])?;
        Ok(process)
    }

    /// Starts a killed process again on its port, directory and arguments
    /// (plus `extra`), and waits until it is ready.
    pub(crate) fn respawn(&mut self, extra: &[OsString]) -> std::io::Result<()> {
        self.kill();
        self.launch(extra)
    }

    fn launch(&mut self, extra: &[OsString]) -> std::io::Result<()> {
        let binary = super::redis_server_path().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, "redis-server is not on PATH")
        })?;
        std::fs::create_dir_all(&self.dir)?;
        let log = self.dir.join("redis.log");
        let _ = std::fs::remove_file(&log);
        let port = self.port;
        let child = Command::new(binary)
            .args(&self.args)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        self.child = Some(child);
        let what = format!("redis-server on port {port}");
        let ready = self.ready;
        let up = || match ready {
            Ready::Ping => ping(port),
            Ready::LogLine(line) => std::fs::read_to_string(&log)
                .map(|l| l.contains(line))
                .unwrap_or(false),
        };
        if startup::wait_ready(&mut self.child, (&what, &log), READY_TIMEOUT, up)? {
            return Ok(());
        }
        self.kill();
        Err(std::io::Error::other(format!(
            "redis-server on port {port} was not ready within {READY_TIMEOUT:?}; log: {}",
            self.log_tail()
        )))
    }

    /// SIGKILL (no shutdown, no save), and wait for it.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub(crate) fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// The OS process id while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The last lines of the log, for error messages.
    pub(crate) fn log_tail(&self) -> String {
        startup::log_tail(&self.dir.join("redis.log"))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The `redis-cli` binary (beside redis-server or on PATH).
pub(crate) fn redis_cli_path() -> std::io::Result<PathBuf> {
    let beside = super::redis_server_path().and_then(|p| Some(p.parent()?.join("redis-cli")));
    if let Some(p) = beside.filter(|p| p.is_file()) {
        return Ok(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("redis-cli"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, "redis-cli is not on PATH")
        })
}

/// `redis-cli -h 127.0.0.1 -p <port> <args>`: its stdout, or an error with
/// its stderr. Bounded by redis-cli's own connect timeout.
pub(crate) fn cli(port: u16, args: &[&str]) -> std::io::Result<String> {
    let stdout = run_cli(port, "--no-raw", args)?;
    if stdout.starts_with("(error)") {
        return Err(std::io::Error::other(format!(
            "redis-cli -p {port} {}: {}",
            args.join(" "),
            stdout.trim(),
        )));
    }
    Ok(stdout)
}

/// `redis-cli … <args>` in raw mode (one reply element per line).
pub(crate) fn cli_raw(port: u16, args: &[&str]) -> std::io::Result<String> {
    run_cli(port, "--raw", args)
}

/// `redis-cli -h 127.0.0.1 -p <port> <mode> <args>`: its stdout, or, when
/// it exits with a failure, an error with its stdout and stderr.
fn run_cli(port: u16, mode: &str, args: &[&str]) -> std::io::Result<String> {
    let out = Command::new(redis_cli_path()?)
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), mode])
        .args(args)
        .stdin(Stdio::null())
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(std::io::Error::other(format!(
            "redis-cli -p {port} {}: {}{}",
            args.join(" "),
            stdout.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(stdout)
}

/// Polls `check` every 50 ms until it answers `Some`, at most `bound`;
/// the error names `what` and the last thing `check` saw.
pub(crate) fn wait_for<T>(
    what: &str,
    bound: Duration,
    mut check: impl FnMut() -> Result<T, String>,
) -> std::io::Result<T> {
    let started = Instant::now();
    loop {
        match check() {
            Ok(value) => return Ok(value),
            Err(last) if started.elapsed() >= bound => {
                return Err(std::io::Error::other(format!(
                    "{what} did not happen within {bound:?}; last seen: {last}"
                )));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Polls until the server on `port` is a replica whose link to its
/// primary is up (its initial sync done), at most `bound`.
pub(crate) fn wait_synced_replica(port: u16, bound: Duration) -> std::io::Result<()> {
    wait_for("the restarted node's sync as a replica", bound, || {
        let info = cli(port, &["INFO", "replication"]).map_err(|e| e.to_string())?;
        (info.contains("role:slave") && info.contains("master_link_status:up"))
            .then_some(())
            .ok_or(info)
    })
}

/// Starts a watcher that SIGKILLs `pids` and removes `dir` once this
/// process has exited: for test servers kept in a `static`, which is never
/// dropped. It polls with `kill -0` (no fixed wait: it ends with us).
pub(crate) fn reap_after_exit(pids: &[u32], dir: &Path) -> std::io::Result<()> {
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    let script = format!(
        "while kill -0 {me} 2>/dev/null; do sleep 0.2; done; kill -9 {pids} 2>/dev/null; rm -rf '{dir}'",
        me = std::process::id(),
        pids = pids.join(" "),
        dir = dir.display(),
    );
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(|_| ())
}

/// `arg` as an `OsString`, for argument lists.
pub(crate) fn os(arg: impl Into<OsString>) -> OsString {
    arg.into()
}
