//! Test support (feature `test-support`): a private `redis-server` per test or suite, random key prefixes, and (`go`) today's Go processor's claim protocol for mixed-fleet tests.
//!
//! Tests never touch a shared Redis: [`RedisServer::start`] launches its own
//! server on a free loopback port with its own data directory, waits until
//! it answers, and kills it (SIGKILL) and removes the directory on drop.
//! [`require_redis_server`] decides what a missing binary means: with `CI`
//! set the test fails with a message saying so; otherwise the caller skips.

use std::hash::{BuildHasher, Hasher};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

mod acl;
mod cluster;
pub mod go;
mod ping;
mod process;
mod sentinel;
mod startup;
mod tls;

pub use acl::add_acl_user;
pub use cluster::{CLUSTER_TIMEOUT, NodeInfo, RedisCluster};
use ping::ping;
pub use sentinel::{MASTER_NAME, SENTINEL_TIMEOUT, SentinelGroup};
pub use tls::TlsServer;

/// How long a starting server may take to answer PING (AOF replay included).
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// The `redis-server` binary on `PATH`, if any.
pub fn redis_server_path() -> Option<PathBuf> {
    program_on_path(&["redis-server"])
}

/// The `redis-server` binary, or `None` when it is missing and `CI` is not
/// set (the caller prints "skipped: redis-server not on PATH").
///
/// # Panics
/// When it is missing and `CI` is set: Redis tests must run in CI.
pub fn require_redis_server() -> Option<PathBuf> {
    require_program(&["redis-server"], "redis-server")
}

/// The first of `names` found on `PATH`, if any.
pub fn program_on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|p| p.is_file())
}

/// The first of `names` on `PATH`, or `None` when none is there and `CI` is
/// not set (the caller says the test was skipped).
///
/// # Panics
/// When none is there and `CI` is set: a test that needs a tool must not be
/// skipped in CI. The message names the Debian `package` that provides it.
pub fn require_program(names: &[&str], package: &str) -> Option<PathBuf> {
    let found = program_on_path(names);
    if found.is_none() && std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!(
            "{} is not on PATH and CI is set: the tests that need it must not be skipped in CI; \
             install it (Debian: apt-get install {package}; .ci/run does) or put it on PATH",
            names[0]
        );
    }
    found
}

/// A fresh key prefix, `test:<random>:`, so stores sharing a server never meet.
pub fn random_prefix() -> String {
    format!("test:{:016x}:", random_u64())
}

pub(crate) fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.write_u32(std::process::id());
    h.finish()
}

/// How to run the server.
#[derive(Debug, Clone, Copy, Default)]
pub struct RedisServerOptions {
    /// AOF on with `appendfsync always`: every write is on disk before the
    /// reply, so a SIGKILL loses nothing acknowledged. Otherwise no persistence.
    pub aof_always: bool,
}

/// A private `redis-server` process. Killed and its data removed on drop.
#[derive(Debug)]
pub struct RedisServer {
    binary: PathBuf,
    port: u16,
    dir: PathBuf,
    options: RedisServerOptions,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts a server on a free port with a new data directory and waits
    /// until it answers. Errors when `redis-server` is missing or does not
    /// come up (the message includes the end of its log).
    pub fn start(options: RedisServerOptions) -> std::io::Result<RedisServer> {
        let binary = redis_server_path().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, "redis-server is not on PATH")
        })?;
        let dir = std::env::temp_dir().join(format!("claim-redis-test-{:016x}", random_u64()));
        std::fs::create_dir_all(&dir)?;
        let mut server = RedisServer {
            binary,
            port: 0,
            dir,
            options,
            child: None,
        };
        let mut last = None;
        for _ in 0..5 {
            // Another process may take the port between probe and bind: retry.
            server.port = free_port()?;
            match server.launch() {
                Ok(()) => return Ok(server),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("redis-server did not start")))
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn data_dir(&self) -> &Path {
        &self.dir
    }

    /// Kills the server with SIGKILL (no shutdown, no final save) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and data directory (after
    /// [`RedisServer::kill`], or killing it first) and waits until it answers.
    pub fn restart(&mut self) -> std::io::Result<()> {
        self.kill();
        self.launch()
    }

    fn launch(&mut self) -> std::io::Result<()> {
        let mut cmd = Command::new(&self.binary);
        cmd.arg("--port")
            .arg(self.port.to_string())
            .arg("--bind")
            .arg("127.0.0.1")
            .arg("--dir")
            .arg(&self.dir)
            .arg("--save")
            .arg("")
            .arg("--daemonize")
            .arg("no")
            .arg("--logfile")
            .arg(self.dir.join("redis.log"));
        if self.options.aof_always {
            cmd.args(["--appendonly", "yes", "--appendfsync", "always"]);
        } else {
            cmd.args(["--appendonly", "no"]);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        self.child = Some(cmd.spawn()?);
        let log = self.dir.join("redis.log");
        let port = self.port;
        let started = startup::wait_ready(
            &mut self.child,
            ("redis-server", &log),
            START_TIMEOUT,
            || ping(port),
        )?;
        if started {
            return Ok(());
        }
        self.kill();
        Err(std::io::Error::other(format!(
            "redis-server on port {} did not answer PING within {START_TIMEOUT:?}; log: {}",
            self.port,
            self.log_tail()
        )))
    }

    fn log_tail(&self) -> String {
        startup::log_tail(&self.dir.join("redis.log"))
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A loopback port nothing listens on (bound, then released), and never
/// one this process handed out before: the port is only taken when the
/// server or worker it is for binds it, so two asked for back to back
/// (two workers of one test, tests running in parallel) could otherwise be
/// given the same one by the kernel, and the second fails to listen.
pub fn free_port() -> std::io::Result<u16> {
    static HANDED_OUT: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    // A set of numbers: a panic elsewhere leaves it consistent.
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|p| p.into_inner());
    for _ in 0..1000 {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        if handed_out.insert(port) {
            return Ok(port);
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AddrInUse,
        "every free loopback port the kernel offered 1,000 times was handed out by this process already",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_asked_for_back_to_back_are_all_different() {
        let ports: Vec<u16> = (0..500)
            .map(|_| free_port().expect("a free port"))
            .collect();
        let distinct: std::collections::BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len(), "a port was handed out twice");
    }

    #[test]
    fn random_prefixes_differ_and_look_like_test_prefixes() {
        let (a, b) = (random_prefix(), random_prefix());
        assert_ne!(a, b);
        assert!(a.starts_with("test:") && a.ends_with(':'));
    }
}
