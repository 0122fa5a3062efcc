//! Private redis-servers for the bench and the image step: a free loopback port and an own directory each, killed on drop.
//!
//! xtask has no dependencies, so this is a std-only cousin of claim-redis's
//! `testing::RedisServer` (which the harness binaries use).

use crate::Error;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The one PING probe of a test Redis, shared with claim-redis's test
/// server as source: xtask has no dependencies, and the file uses std only.
#[path = "../../claim-redis/src/testing/ping.rs"]
mod redis_ping;
use redis_ping::ping;

/// A private redis-server: free loopback port, own directory, killed on drop.
pub(crate) struct Server {
    pub port: u16,
    dir: PathBuf,
    child: Child,
}

impl Server {
    pub fn start(out_dir: &Path, aof: bool) -> Result<Server, Error> {
        let port = Server::free_port()?;
        let dir = out_dir.join(format!("redis-{port}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::Failed(format!("cannot create {}: {e}", dir.display())))?;
        let persistence = match aof {
            true => "--appendonly yes --appendfsync everysec",
            false => "--appendonly no",
        };
        let flags = format!(
            "--port {port} --bind 127.0.0.1 --daemonize no --logfile redis.log {persistence}"
        );
        let mut cmd = Command::new("redis-server");
        cmd.args(flags.split(' '))
            .args(["--save", "", "--dir"])
            .arg(&dir);
        let install = "install it (Debian: apt-get install redis-server)";
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .stdin(Stdio::null())
            .spawn();
        let child = child
            .map_err(|e| Error::Failed(format!("could not start redis-server ({e}); {install}")))?;
        let server = Server { port, dir, child };
        let started = Instant::now();
        while !ping(port) {
            if started.elapsed() > Duration::from_secs(15) {
                return Err(Error::Failed(format!(
                    "redis-server on port {port} did not answer PING; see {}/redis.log",
                    server.dir.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
    }

    /// A loopback port nothing listens on now.
    pub fn free_port() -> Result<u16, Error> {
        TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|e| Error::Failed(format!("no free loopback port: {e}")))
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
