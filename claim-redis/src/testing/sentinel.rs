//! A private Sentinel group for tests: one primary, one replica, three `redis-server --sentinel` with a generated config, on free loopback ports; kill the primary and wait until the sentinels name the promoted replica.

use super::process::{Process, Ready, cli, cli_raw, os, wait_for, wait_synced_replica};
use super::{free_port, random_u64};
use std::path::PathBuf;
use std::time::Duration;

/// The master name the sentinels monitor.
pub const MASTER_NAME: &str = "claim-redis-test";

/// Bound on the group forming and on a failover.
pub const SENTINEL_TIMEOUT: Duration = Duration::from_secs(40);

#[derive(Debug)]
pub struct SentinelGroup {
    /// `[primary, replica]` as started; after a failover the roles swap.
    data: Vec<Process>,
    sentinels: Vec<Process>,
    root: PathBuf,
}

impl SentinelGroup {
    /// Starts the primary, the replica (synced), then three sentinels with
    /// quorum 2 and a 1 s down-after, and waits until every sentinel knows
    /// the replica and the other two sentinels.
    pub fn start() -> std::io::Result<SentinelGroup> {
        let root = std::env::temp_dir().join(format!("claim-redis-sentinel-{:016x}", random_u64()));
        let mut group = SentinelGroup {
            data: Vec::new(),
            sentinels: Vec::new(),
            root,
        };
        let primary = group.spawn_data("primary", None)?;
        let primary_port = primary.port;
        group.data.push(primary);
        let replica = group.spawn_data("replica", Some(primary_port))?;
        group.data.push(replica);
        wait_for("the replica's sync", SENTINEL_TIMEOUT, || {
            let info =
                cli(group.data[1].port, &["INFO", "replication"]).map_err(|e| e.to_string())?;
            info.contains("master_link_status:up")
                .then_some(())
                .ok_or(info)
        })?;
        for i in 0..3 {
            let s = group.spawn_sentinel(i, primary_port)?;
            group.sentinels.push(s);
        }
        wait_for("the sentinels meeting", SENTINEL_TIMEOUT, || {
            for s in &group.sentinels {
                let raw = cli_raw(s.port, &["SENTINEL", "MASTER", MASTER_NAME])
                    .map_err(|e| e.to_string())?;
                let field = |name: &str| -> Option<String> {
                    let lines: Vec<&str> = raw.lines().collect();
                    let i = lines.iter().position(|l| *l == name)?;
                    lines.get(i + 1).map(|v| v.to_string())
                };
                if field("num-slaves").as_deref() != Some("1")
                    || field("num-other-sentinels").as_deref() != Some("2")
                {
                    return Err(raw);
                }
            }
            Ok(())
        })?;
        Ok(group)
    }

    fn spawn_data(&self, name: &str, replica_of: Option<u16>) -> std::io::Result<Process> {
        let dir = self.root.join(name);
        Process::spawn_on_free_port(&dir, Ready::Ping, |port| {
            let mut args = vec![os("--port"), os(port.to_string())];
            if let Some(p) = replica_of {
                args.extend([os("--replicaof"), os("127.0.0.1"), os(p.to_string())]);
            }
            Ok(args)
        })
    }

    fn spawn_sentinel(&self, i: usize, primary: u16) -> std::io::Result<Process> {
        let dir = self.root.join(format!("sentinel{i}"));
        std::fs::create_dir_all(&dir)?;
        let mut last = None;
        for _ in 0..5 {
            let port = free_port()?;
            let conf = dir.join("sentinel.conf");
            std::fs::write(
                &conf,
                format!(
                    "port {port}\nbind 127.0.0.1\ndaemonize no\ndir {dir}\nlogfile {log}\n\
                     sentinel monitor {MASTER_NAME} 127.0.0.1 {primary} 2\n\
                     sentinel down-after-milliseconds {MASTER_NAME} 1000\n\
                     sentinel failover-timeout {MASTER_NAME} 5000\n\
                     sentinel parallel-syncs {MASTER_NAME} 1\n",
                    dir = dir.display(),
                    log = dir.join("redis.log").display(),
                ),
            )?;
            let args = [conf.clone().into_os_string(), os("--sentinel")];
            match Process::spawn(port, &dir, &args, Ready::Ping) {
                Ok(p) => return Ok(p),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("sentinel did not start")))
    }

    /// `redis://127.0.0.1:<first sentinel>`: the URL a store is given.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.sentinels[0].port)
    }

    /// `127.0.0.1:<port>` of the other two sentinels.
    pub fn other_sentinels(&self) -> Vec<String> {
        self.sentinels[1..]
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect()
    }

    /// The port the sentinels name as the primary now.
    pub fn primary_port(&self) -> std::io::Result<u16> {
        let raw = cli_raw(
            self.sentinels[0].port,
            &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME],
        )?;
        raw.lines()
            .nth(1)
            .and_then(|p| p.trim().parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("no master address: {raw:?}")))
    }

    /// SIGKILLs the current primary and waits until every sentinel names
    /// the promoted replica and it answers as a primary. Returns its port.
    pub fn kill_primary(&mut self) -> std::io::Result<u16> {
        let old = self.kill_primary_now()?;
        self.wait_failover(old)
    }

    /// SIGKILLs the current primary without waiting (callers observe the
    /// failover window themselves); returns its port.
    pub fn kill_primary_now(&mut self) -> std::io::Result<u16> {
        let old = self.primary_port()?;
        let process = self
            .data
            .iter_mut()
            .find(|p| p.port == old && p.is_running())
            .ok_or_else(|| std::io::Error::other(format!("no running primary on {old}")))?;
        process.kill();
        Ok(old)
    }

    /// Waits until every sentinel names a primary other than `old` and it
    /// answers as a primary. Returns its port.
    pub fn wait_failover(&self, old: u16) -> std::io::Result<u16> {
        wait_for("the sentinels' failover", SENTINEL_TIMEOUT, || {
            for s in &self.sentinels {
                let raw = cli_raw(
                    s.port,
                    &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME],
                )
                .map_err(|e| e.to_string())?;
                let port: u16 = raw
                    .lines()
                    .nth(1)
                    .and_then(|p| p.trim().parse().ok())
                    .ok_or_else(|| raw.clone())?;
                if port == old {
                    return Err(format!("sentinel {} still names {old}", s.port));
                }
            }
            let new = self.primary_port().map_err(|e| e.to_string())?;
            let info = cli(new, &["INFO", "replication"]).map_err(|e| e.to_string())?;
            info.contains("role:master").then_some(new).ok_or(info)
        })
    }

    /// Starts the killed data node on `port` again as a replica of the
    /// current primary (the sentinels would reconfigure it so too; saying
    /// it at start spares the wait), and waits until its sync is done.
    pub fn restart_node(&mut self, port: u16) -> std::io::Result<()> {
        let primary = self.primary_port()?;
        let process = self
            .data
            .iter_mut()
            .find(|p| p.port == port)
            .ok_or_else(|| std::io::Error::other(format!("no data node on port {port}")))?;
        process.respawn(&[os("--replicaof"), os("127.0.0.1"), os(primary.to_string())])?;
        wait_synced_replica(port, SENTINEL_TIMEOUT)
    }
}

impl Drop for SentinelGroup {
    fn drop(&mut self) {
        for p in self.sentinels.iter_mut().chain(self.data.iter_mut()) {
            p.kill();
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
