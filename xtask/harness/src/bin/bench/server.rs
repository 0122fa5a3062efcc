//! The bench's own view of the Redis server: its CPU and command counters, memory, and a Go-style producer.
//!
//! CPU is the server's own `used_cpu_sys + used_cpu_user` (every thread of
//! the server process), so other work on the machine does not inflate it.
//! Commands are `INFO commandstats`, which counts the commands scripts run
//! as well as the scripts themselves.

use crate::members::{Payloads, enqueue_batches, producer_commands};
use redis::aio::MultiplexedConnection;
use std::collections::BTreeMap;

/// Commands the bench itself sends; they are not the workload's.
const OWN_COMMANDS: [&str; 7] = [
    "info",
    "config|resetstat",
    "flushall",
    "memory|usage",
    "scan",
    "slowlog|reset",
    "script|flush",
];

/// A connection of the bench's own (not the store's pool).
#[derive(Clone)]
pub struct Admin {
    conn: MultiplexedConnection,
}

/// One reading of the server's counters.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub cpu_s: f64,
    /// The kernel's share of `cpu_s` (system calls, page faults).
    pub sys_s: f64,
    /// Command name → (calls, µs).
    pub commands: BTreeMap<String, (u64, u64)>,
}

/// What the server did between two snapshots.
#[derive(Debug, Clone, Default)]
pub struct Delta {
    pub cpu_us: f64,
    pub sys_us: f64,
    pub commands: BTreeMap<String, (u64, u64)>,
}

impl Delta {
    /// Every command the workload ran, script-internal ones included.
    pub fn calls(&self) -> u64 {
        self.commands
            .iter()
            .filter(|(name, _)| !OWN_COMMANDS.contains(&name.as_str()))
            .map(|(_, (calls, _))| calls)
            .sum()
    }

    /// Adds `other`'s figures (another node's) to these.
    pub fn add(&mut self, other: &Delta) {
        self.cpu_us += other.cpu_us;
        self.sys_us += other.sys_us;
        for (name, (calls, usec)) in &other.commands {
            let entry = self.commands.entry(name.clone()).or_default();
            entry.0 += calls;
            entry.1 += usec;
        }
    }

    pub fn calls_of(&self, name: &str) -> u64 {
        self.commands.get(name).map_or(0, |c| c.0)
    }

    /// The per-command breakdown, per job, as JSON.
    pub fn per_job_json(&self, jobs: u64) -> serde_json::Value {
        let jobs = jobs.max(1) as f64;
        let mut out = serde_json::Map::new();
        for (name, (calls, usec)) in &self.commands {
            if OWN_COMMANDS.contains(&name.as_str()) {
                continue;
            }
            out.insert(
                name.clone(),
                serde_json::json!({
                    "calls_per_job": round(*calls as f64 / jobs, 4),
                    "usec_per_job": round(*usec as f64 / jobs, 3),
                }),
            );
        }
        out.into()
    }
}

pub fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

/// Bound on each of the bench's own commands.
const ADMIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Marks a server the bench has flushed before, so later runs may flush it again.
const OWNED_KEY: &str = "claim-bench:owned";

impl Admin {
    /// The bench's own commands may be slow on a busy machine (a
    /// `FLUSHALL` of 400,000 keys, a pipeline of 1,000 requests): they get
    /// [`ADMIN_TIMEOUT`], not redis-rs's default of 500 ms.
    pub async fn connect(url: &str) -> redis::RedisResult<Admin> {
        let client = redis::Client::open(url)?;
        let config = redis::AsyncConnectionConfig::new().set_response_timeout(Some(ADMIN_TIMEOUT));
        Ok(Admin {
            conn: client
                .get_multiplexed_async_connection_with_config(&config)
                .await?,
        })
    }

    /// Empties the server between runs, leaving the key that marks it as the
    /// bench's own (see [`Admin::refuse_foreign`]).
    pub async fn flush(&self) -> redis::RedisResult<()> {
        self.flush_node().await?;
        let mut c = self.conn.clone();
        redis::cmd("SET")
            .arg(OWNED_KEY)
            .arg(1)
            .query_async(&mut c)
            .await
    }

    /// Empties this node only, with no mark: a cluster node, which the
    /// run started itself (the mark's slot may be another node's).
    pub async fn flush_node(&self) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        redis::cmd("FLUSHALL").query_async(&mut c).await
    }

    /// Every run flushes its server, so a server given with `--url` must be
    /// empty or already the bench's own: a server holding anyone's data is
    /// refused before anything is written.
    pub async fn refuse_foreign(&self, url: &str) -> Result<(), String> {
        let mut c = self.conn.clone();
        let keys: u64 = redis::cmd("DBSIZE")
            .query_async(&mut c)
            .await
            .map_err(|e| e.to_string())?;
        let owned: bool = redis::cmd("EXISTS")
            .arg(OWNED_KEY)
            .query_async(&mut c)
            .await
            .map_err(|e| e.to_string())?;
        if keys == 0 || owned {
            return Ok(());
        }
        Err(format!(
            "{url} holds {keys} keys that are not the bench's: the bench flushes the server it runs on; \
             give it an empty server, or leave out --url to start a private one"
        ))
    }

    /// Zeroes the command counters (CPU counters cannot be reset: compare snapshots).
    pub async fn reset_stats(&self) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        redis::cmd("CONFIG")
            .arg("RESETSTAT")
            .query_async(&mut c)
            .await
    }

    /// Empties what a server holds besides its keys and grows with activity,
    /// not with data, before a memory reading: the slow log (up to 128
    /// entries of up to 32 arguments), the Lua VM with its script cache
    /// (`SCRIPT FLUSH`: hundreds of KB of heap and cached scripts; a store
    /// loads its scripts again when it next calls one) and the latency
    /// histogram of every command used so far (`CONFIG RESETSTAT`, tens of
    /// KB each). All of it is inside `used_memory`.
    pub async fn shed_activity(&self) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        redis::cmd("SLOWLOG")
            .arg("RESET")
            .query_async::<()>(&mut c)
            .await?;
        redis::cmd("SCRIPT")
            .arg("FLUSH")
            .arg("SYNC")
            .query_async::<()>(&mut c)
            .await?;
        self.reset_stats().await
    }

    pub async fn snapshot(&self) -> redis::RedisResult<Snapshot> {
        let mut c = self.conn.clone();
        let info: String = redis::cmd("INFO")
            .arg("cpu")
            .arg("commandstats")
            .query_async(&mut c)
            .await?;
        let (cpu, stats) = (&info, &info);
        let field = |name: &str| -> f64 {
            cpu.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0.0)
        };
        let mut commands = BTreeMap::new();
        for line in stats.lines() {
            let Some((name, rest)) = line
                .strip_prefix("cmdstat_")
                .and_then(|l| l.split_once(':'))
            else {
                continue;
            };
            let value = |key: &str| -> u64 {
                rest.split(',')
                    .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
            };
            commands.insert(name.to_owned(), (value("calls"), value("usec")));
        }
        Ok(Snapshot {
            cpu_s: field("used_cpu_sys") + field("used_cpu_user"),
            sys_s: field("used_cpu_sys"),
            commands,
        })
    }

    pub fn delta(before: &Snapshot, after: &Snapshot) -> Delta {
        let mut commands = BTreeMap::new();
        for (name, (calls, usec)) in &after.commands {
            let (c0, u0) = before.commands.get(name).copied().unwrap_or_default();
            if calls > &c0 {
                commands.insert(name.clone(), (calls - c0, usec.saturating_sub(u0)));
            }
        }
        Delta {
            cpu_us: (after.cpu_s - before.cpu_s) * 1e6,
            sys_us: (after.sys_s - before.sys_s) * 1e6,
            commands,
        }
    }

    /// `MEMORY USAGE` summed over `keys` (every element counted).
    pub async fn memory_usage(&self, keys: &[String]) -> redis::RedisResult<u64> {
        let mut c = self.conn.clone();
        let mut total = 0;
        for key in keys {
            let bytes: Option<u64> = redis::cmd("MEMORY")
                .arg("USAGE")
                .arg(key)
                .arg("SAMPLES")
                .arg(0)
                .query_async(&mut c)
                .await?;
            total += bytes.unwrap_or(0);
        }
        Ok(total)
    }

    /// How many keys match `pattern` (`SCAN`, so the server never blocks).
    pub async fn count_keys(&self, pattern: &str) -> redis::RedisResult<u64> {
        let mut c = self.conn.clone();
        let mut cursor = 0u64;
        let mut count = 0;
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut c)
                .await?;
            count += keys.len() as u64;
            if next == 0 {
                return Ok(count);
            }
            cursor = next;
        }
    }

    /// A numeric field of `INFO <section>` (`used_memory`, `connected_clients`).
    pub async fn info_field(&self, section: &str, name: &str) -> redis::RedisResult<u64> {
        let mut c = self.conn.clone();
        let info: String = redis::cmd("INFO").arg(section).query_async(&mut c).await?;
        Ok(info
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0))
    }

    /// Every key of the server, with its `MEMORY USAGE` (`SCAN`, then
    /// the usages pipelined 1,000 keys at a time).
    pub async fn keys_with_usage(&self) -> redis::RedisResult<Vec<(String, u64)>> {
        let mut c = self.conn.clone();
        let mut keys: Vec<String> = Vec::new();
        let mut cursor = 0u64;
        loop {
            let (next, page): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut c)
                .await?;
            keys.extend(page);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(1000) {
            let mut pipe = redis::pipe();
            for key in chunk {
                pipe.cmd("MEMORY")
                    .arg("USAGE")
                    .arg(key)
                    .arg("SAMPLES")
                    .arg(0);
            }
            let usage: Vec<Option<u64>> = pipe.query_async(&mut c).await?;
            out.extend(
                chunk
                    .iter()
                    .cloned()
                    .zip(usage.into_iter().map(Option::unwrap_or_default)),
            );
        }
        Ok(out)
    }

    /// Pops up to `count` records from the right of `list` (as a `BRPOP`
    /// consumer takes them, oldest first).
    pub async fn pop(&self, list: &str, count: usize) -> redis::RedisResult<Vec<String>> {
        let mut c = self.conn.clone();
        let popped: Option<Vec<String>> = redis::cmd("RPOP")
            .arg(list)
            .arg(count)
            .query_async(&mut c)
            .await?;
        Ok(popped.unwrap_or_default())
    }

    pub async fn hlen(&self, key: &str) -> redis::RedisResult<u64> {
        self.count("HLEN", key).await
    }

    /// Members of a sorted set (a queue's pending requests).
    pub async fn zcard(&self, key: &str) -> redis::RedisResult<u64> {
        self.count("ZCARD", key).await
    }

    async fn count(&self, command: &str, key: &str) -> redis::RedisResult<u64> {
        let mut c = self.conn.clone();
        redis::cmd(command).arg(key).query_async(&mut c).await
    }

    /// Enqueues requests `seqs` as the Go producer does (see
    /// [`producer_commands`]), pipelined 1,000 requests at a time; calls
    /// `mark` for each just before its batch is sent.
    pub async fn enqueue(
        &self,
        queue: &str,
        seqs: std::ops::Range<usize>,
        deadline: i64,
        payloads: Payloads,
        mut mark: impl FnMut(usize),
    ) -> redis::RedisResult<()> {
        for batch in enqueue_batches(seqs) {
            let mut pipe = redis::pipe();
            for seq in batch {
                for (_, cmd) in producer_commands(queue, seq, deadline, payloads) {
                    pipe.add_command(cmd).ignore();
                }
                mark(seq);
            }
            self.send(&pipe).await?;
        }
        Ok(())
    }

    /// Sends a pipeline whose replies are all ignored.
    pub async fn send(&self, pipe: &redis::Pipeline) -> redis::RedisResult<()> {
        let mut c = self.conn.clone();
        pipe.query_async(&mut c).await
    }
}
