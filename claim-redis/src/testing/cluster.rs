//! A private Redis Cluster for tests: three primaries with one replica each (or none, for the bench) on free loopback ports, own data dirs, `redis-cli --cluster create`; kill a primary and wait for its replica's promotion; all killed on drop.

use super::process::{
    Process, Ready, cli, cli_raw, os, reap_after_exit, redis_cli_path, wait_for,
    wait_synced_replica,
};
use super::{free_port, random_u64};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Bound on the cluster forming, and on a replica's promotion.
pub const CLUSTER_TIMEOUT: Duration = Duration::from_secs(40);

/// Primaries: the slots are split three ways.
const PRIMARIES: usize = 3;

/// A running cluster of six `redis-server --cluster-enabled yes` processes.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<Process>,
    root: PathBuf,
}

/// One line of `CLUSTER NODES`.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    pub port: u16,
    pub primary: bool,
    pub failed: bool,
    /// The slot ranges it serves, inclusive (primaries only).
    pub slots: Vec<(u16, u16)>,
}

impl NodeInfo {
    pub fn serves(&self, slot: u16) -> bool {
        self.slots.iter().any(|&(a, b)| (a..=b).contains(&slot))
    }
}

impl RedisCluster {
    /// Starts six nodes, joins them (`--cluster-replicas 1`) and waits until
    /// every node reports `cluster_state:ok` and each replica has synced.
    pub fn start() -> std::io::Result<RedisCluster> {
        RedisCluster::start_with_replicas(1)
    }

    /// Starts three primaries with `replicas` replicas each (0: primaries
    /// only, as the bench wants, so no replication traffic shares the
    /// CPU), joined and healthy as [`RedisCluster::start`] leaves them.
    pub fn start_with_replicas(replicas: usize) -> std::io::Result<RedisCluster> {
        redis_cli_path()?;
        let root = std::env::temp_dir().join(format!("claim-redis-cluster-{:016x}", random_u64()));
        let mut cluster = RedisCluster {
            nodes: Vec::new(),
            root,
        };
        for i in 0..PRIMARIES * (1 + replicas) {
            let node = cluster.spawn_node(i)?;
            cluster.nodes.push(node);
        }
        let addrs: Vec<String> = cluster
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        // `--cluster create` waits for the nodes to agree without a bound
        // of its own: bound it here.
        let log = cluster.root.join("create.log");
        let mut create = Command::new(redis_cli_path()?)
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log)?)
            .stderr(Stdio::null())
            .spawn()?;
        let status = wait_for(
            "redis-cli --cluster create",
            CLUSTER_TIMEOUT,
            || match create.try_wait() {
                Ok(Some(status)) => Ok(Ok(status)),
                Ok(None) => Err("still running".into()),
                Err(e) => Ok(Err(e)),
            },
        );
        let status = match status {
            Ok(status) => status?,
            Err(e) => {
                let _ = create.kill();
                let _ = create.wait();
                return Err(e);
            }
        };
        if !status.success() {
            return Err(std::io::Error::other(format!(
                "redis-cli --cluster create failed ({status}): {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            )));
        }
        cluster.wait_healthy(CLUSTER_TIMEOUT)?;
        Ok(cluster)
    }

    /// One cluster for every test of this test binary that only needs a
    /// healthy cluster (tests keep apart by key prefix); started on first
    /// use, SIGKILLed and removed by a watcher when the binary exits.
    /// Tests that kill nodes start their own with [`RedisCluster::start`].
    pub fn shared() -> std::io::Result<&'static RedisCluster> {
        static SHARED: std::sync::OnceLock<Result<RedisCluster, String>> =
            std::sync::OnceLock::new();
        let cluster = SHARED.get_or_init(|| {
            let cluster = RedisCluster::start().map_err(|e| e.to_string())?;
            let pids: Vec<u32> = cluster.nodes.iter().filter_map(Process::pid).collect();
            reap_after_exit(&pids, &cluster.root).map_err(|e| e.to_string())?;
            Ok(cluster)
        });
        cluster
            .as_ref()
            .map_err(|e| std::io::Error::other(e.clone()))
    }

    fn spawn_node(&self, i: usize) -> std::io::Result<Process> {
        let dir = self.root.join(format!("node{i}"));
        Process::spawn_on_free_port(&dir, Ready::Ping, |port| {
            let bus = loop {
                let bus = free_port()?;
                if bus != port {
                    break bus;
                }
            };
            Ok(vec![
                os("--port"),
                os(port.to_string()),
                os("--cluster-port"),
                os(bus.to_string()),
                os("--cluster-enabled"),
                os("yes"),
                os("--cluster-config-file"),
                dir.join("nodes.conf").into_os_string(),
                os("--cluster-node-timeout"),
                os("1000"),
                os("--cluster-replica-validity-factor"),
                os("0"),
            ])
        })
    }

    /// The URL of the first running node: `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.live_port())
    }

    /// `127.0.0.1:<port>` of every running node (seeds for the client).
    pub fn seeds(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|n| n.is_running())
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect()
    }

    fn live_port(&self) -> u16 {
        self.nodes
            .iter()
            .find(|n| n.is_running())
            .map(|n| n.port)
            .unwrap_or(0)
    }

    /// `CLUSTER NODES` as a running node sees it.
    pub fn nodes(&self) -> std::io::Result<Vec<NodeInfo>> {
        Ok(parse_nodes(&cli_raw(
            self.live_port(),
            &["CLUSTER", "NODES"],
        )?))
    }

    /// Ports of the live primaries, ordered by the first slot they serve.
    pub fn primaries(&self) -> std::io::Result<Vec<u16>> {
        let mut primaries: Vec<NodeInfo> = self
            .nodes()?
            .into_iter()
            .filter(|n| n.primary && !n.failed && !n.slots.is_empty())
            .collect();
        primaries.sort_by_key(|n| n.slots.iter().min().copied());
        Ok(primaries.into_iter().map(|n| n.port).collect())
    }

    /// The slot of `key` (`CLUSTER KEYSLOT`).
    pub fn key_slot(&self, key: &str) -> std::io::Result<u16> {
        let out = cli_raw(self.live_port(), &["CLUSTER", "KEYSLOT", key])?;
        out.trim()
            .parse()
            .map_err(|e| std::io::Error::other(format!("CLUSTER KEYSLOT {key}: {out:?}: {e}")))
    }

    /// The port of the live primary serving `slot`.
    pub fn primary_of_slot(&self, slot: u16) -> std::io::Result<u16> {
        self.nodes()?
            .into_iter()
            .find(|n| n.primary && !n.failed && n.serves(slot))
            .map(|n| n.port)
            .ok_or_else(|| std::io::Error::other(format!("no live primary serves slot {slot}")))
    }

    /// SIGKILLs the `i`-th primary (in slot order) and waits until its
    /// replica is promoted and the cluster is ok again. Returns the
    /// promoted node's port.
    pub fn kill_primary(&mut self, i: usize) -> std::io::Result<u16> {
        let primaries = self.primaries()?;
        let port = *primaries.get(i).ok_or_else(|| {
            std::io::Error::other(format!("no primary {i}: {} primaries", primaries.len()))
        })?;
        self.kill_node_and_wait(port)
    }

    /// SIGKILLs the primary serving `slot`, waits for the promotion, and
    /// returns the promoted node's port.
    pub fn kill_primary_of_slot(&mut self, slot: u16) -> std::io::Result<u16> {
        let port = self.primary_of_slot(slot)?;
        self.kill_node_and_wait(port)
    }

    /// SIGKILLs the primary on `port` without waiting (callers observe the
    /// failover window themselves), returning a slot it served.
    pub fn kill_primary_now(&mut self, port: u16) -> std::io::Result<u16> {
        let slot = self
            .nodes()?
            .into_iter()
            .find(|n| n.port == port && n.primary)
            .and_then(|n| n.slots.first().map(|r| r.0))
            .ok_or_else(|| std::io::Error::other(format!("{port} is not a primary")))?;
        let node = self
            .nodes
            .iter_mut()
            .find(|n| n.port == port)
            .ok_or_else(|| std::io::Error::other(format!("no node on port {port}")))?;
        node.kill();
        Ok(slot)
    }

    /// Sends `signal` (`STOP`, `CONT`) to the node on `port`: a stopped
    /// node keeps its connections open and answers nothing, the fault a
    /// client meets when a node hangs.
    pub fn signal_node(&self, port: u16, signal: &str) -> std::io::Result<()> {
        let pid = self
            .nodes
            .iter()
            .find(|n| n.port == port)
            .and_then(Process::pid)
            .ok_or_else(|| std::io::Error::other(format!("no running node on port {port}")))?;
        let status = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "kill -{signal} {pid}: {status}"
            )))
        }
    }

    /// Starts the killed node on `port` again, on its port, data dir and
    /// `nodes.conf`: the cluster has promoted its replica meanwhile, so it
    /// rejoins as that node's replica. Waits until its sync is done.
    pub fn restart_node(&mut self, port: u16) -> std::io::Result<()> {
        let node = self
            .nodes
            .iter_mut()
            .find(|n| n.port == port)
            .ok_or_else(|| std::io::Error::other(format!("no node on port {port}")))?;
        node.respawn(&[])?;
        wait_synced_replica(port, CLUSTER_TIMEOUT)
    }

    fn kill_node_and_wait(&mut self, port: u16) -> std::io::Result<u16> {
        let slot = self.kill_primary_now(port)?;
        self.wait_promoted(slot, port)
    }

    /// Waits until `slot` is served by a live primary other than `old` and
    /// every live node reports `cluster_state:ok`.
    pub fn wait_promoted(&self, slot: u16, old: u16) -> std::io::Result<u16> {
        wait_for("the replica's promotion", CLUSTER_TIMEOUT, || {
            let nodes = self.nodes().map_err(|e| e.to_string())?;
            let new = nodes
                .iter()
                .find(|n| n.primary && !n.failed && n.port != old && n.serves(slot))
                .map(|n| n.port)
                .ok_or_else(|| format!("slot {slot} still on {old}"))?;
            self.all_ok()?;
            Ok(new)
        })
    }

    /// Waits until every running node reports `cluster_state:ok`, sees
    /// three live primaries, and every live replica's link is up.
    pub fn wait_healthy(&self, bound: Duration) -> std::io::Result<()> {
        wait_for("the cluster forming", bound, || {
            self.all_ok()?;
            let nodes = self.nodes().map_err(|e| e.to_string())?;
            let primaries = nodes.iter().filter(|n| n.primary && !n.failed).count();
            if primaries != PRIMARIES {
                return Err(format!("{primaries} live primaries"));
            }
            for node in self.nodes.iter().filter(|n| n.is_running()) {
                let info = cli(node.port, &["INFO", "replication"]).map_err(|e| e.to_string())?;
                if info.contains("role:slave") && !info.contains("master_link_status:up") {
                    return Err(format!("replica {} not synced", node.port));
                }
            }
            Ok(())
        })
    }

    fn all_ok(&self) -> Result<(), String> {
        for node in self.nodes.iter().filter(|n| n.is_running()) {
            let info = cli_raw(node.port, &["CLUSTER", "INFO"]).map_err(|e| e.to_string())?;
            if !info.contains("cluster_state:ok") {
                return Err(format!("node {} not ok", node.port));
            }
        }
        Ok(())
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Reads `CLUSTER NODES`: `<id> <ip:port@bus> <flags> <primary> <ping> <pong> <epoch> <link> <slots…>`.
fn parse_nodes(raw: &str) -> Vec<NodeInfo> {
    raw.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 8 {
                return None;
            }
            let addr = fields[1].split(['@', ',']).next()?;
            let port = addr.rsplit(':').next()?.parse().ok()?;
            let flags = fields[2];
            let slots = fields[8..]
                .iter()
                .filter(|s| !s.starts_with('['))
                .filter_map(|s| {
                    let (a, b) = s.split_once('-').unwrap_or((s, s));
                    Some((a.parse().ok()?, b.parse().ok()?))
                })
                .collect();
            Some(NodeInfo {
                port,
                primary: flags.contains("master"),
                failed: flags.contains("fail") || fields[7] != "connected",
                slots,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_nodes_lines_give_ports_roles_and_first_slots() {
        let raw = "a 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n\
                   b 127.0.0.1:7001@17001 slave a 0 0 1 connected\n\
                   c 127.0.0.1:7002@17002 master,fail - 0 0 2 disconnected 5461-10922 12000\n";
        let nodes = parse_nodes(raw);
        assert_eq!(nodes.len(), 3);
        assert!(nodes[0].primary && !nodes[0].failed && nodes[0].slots == [(0, 5460)]);
        assert!(!nodes[1].primary && nodes[1].port == 7001);
        assert!(nodes[2].failed && nodes[2].slots == [(5461, 10922), (12000, 12000)]);
        assert!(nodes[2].serves(6000) && !nodes[0].serves(6000));
    }
}
