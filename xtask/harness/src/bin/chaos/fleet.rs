//! The worker processes: start, SIGKILL and restart, supervise, scrape `/metrics`, SIGTERM at the end.
//!
//! Each slot runs one `async-worker` process at a time (the real release
//! binary), logging to a file of its own. A slot whose process exits on its
//! own (a crash, or a start while Redis was unreachable: exit code 1) is
//! restarted by the supervisor, as an orchestrator would, and fails the
//! verdict: the plan never starts a worker into an outage. Counters scraped
//! from a process are kept after it dies, so the totals include what killed
//! processes had reported by their last scrape.

use async_worker::metrics as m;
use async_worker::test_support::{metric_sum, scrape};
use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Declares [`Counters`] with each field listed once next to the metric it
/// is scraped from; reading a page and summing follow from the list.
macro_rules! counters {
    ($($(#[$doc:meta])* $field:ident <- $metric:path,)*) => {
        /// Counters scraped from one or more processes' `/metrics`.
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        pub struct Counters {
            $($(#[$doc])* pub $field: f64,)*
        }

        impl Counters {
            fn from_page(page: &str) -> Counters {
                Counters {
                    $($field: metric_sum(page, $metric),)*
                }
            }

            fn add(&mut self, o: &Counters) {
                $(self.$field += o.$field;)*
            }
        }
    };
}

counters! {
    duplicates_suppressed <- m::DUPLICATES_SUPPRESSED,
    /// Pending copies of answered or claimed generations dropped at claim time.
    pending_duplicates_dropped <- m::PENDING_DUPLICATES_DROPPED,
    /// Own acks resent after an uncertain attempt that had landed.
    retried_acks_landed <- m::RETRIED_ACKS_LANDED,
    claims_expired <- m::CLAIMS_EXPIRED,
    dead_lettered <- m::DEAD_LETTERED,
    lease_lost <- m::LEASE_LOST,
    retries <- m::RETRIES,
    /// Requests handed to the handler, retries included.
    requests <- m::DISPATCHED,
}

/// One process of a slot.
#[derive(Debug)]
struct Instance {
    child: Child,
    metrics_port: u16,
    log: PathBuf,
    last: Counters,
}

/// A process and how many requests it had claimed at some moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mark {
    pub slot: usize,
    pub pid: u32,
    pub requests: f64,
}

/// A process that was SIGKILLed.
#[derive(Debug)]
pub struct Killed {
    pub pid: u32,
    /// Its owner token, read from its log; `None` if it had not logged it yet.
    pub owner: Option<String>,
    /// When the signal was sent.
    pub at: Instant,
    pub new_pid: u32,
}

#[derive(Debug)]
pub struct Fleet {
    bin: PathBuf,
    logs: PathBuf,
    /// The transport config JSON of each slot (they differ in the Redis URL).
    configs: Vec<String>,
    concurrency: usize,
    slots: Vec<Instance>,
    /// Counters of processes that are gone.
    gone: Counters,
    started: usize,
    /// Processes that exited without being killed, and how.
    pub unexpected_exits: Vec<String>,
}

impl Fleet {
    /// Starts one process per config.
    pub fn start(
        bin: &Path,
        logs: &Path,
        configs: Vec<String>,
        concurrency: usize,
    ) -> std::io::Result<Fleet> {
        let mut fleet = Fleet {
            bin: bin.to_owned(),
            logs: logs.to_owned(),
            configs,
            concurrency,
            slots: Vec::new(),
            gone: Counters::default(),
            started: 0,
            unexpected_exits: Vec::new(),
        };
        for slot in 0..fleet.configs.len() {
            let instance = fleet.spawn(slot)?;
            fleet.slots.push(instance);
        }
        Ok(fleet)
    }

    fn spawn(&mut self, slot: usize) -> std::io::Result<Instance> {
        self.started += 1;
        let log = self
            .logs
            .join(format!("worker{slot}-{:03}.log", self.started));
        let out = File::create(&log)?;
        let metrics_port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        #[rustfmt::skip]
        let child = Command::new(&self.bin)
            .args(["run", "--transport-config", &self.configs[slot]])
            .args(["--metrics-port", &metrics_port.to_string(), "--health-port", "0"])
            .args(["--bind-address", "127.0.0.1", "--drain-timeout", "10s"])
            .args(["--concurrency", &self.concurrency.to_string()])
            // Text lines: the owner token is read back as `owner=<hex>`.
            .arg("--zap-encoder=console")
            .env_remove("REDIS_URL")
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()?;
        Ok(Instance {
            child,
            metrics_port,
            log,
            last: Counters::default(),
        })
    }

    /// Processes that have logged their owner token (they are connected and claiming).
    pub fn owners_known(&self) -> usize {
        self.slots
            .iter()
            .filter(|i| owner_token(&i.log).is_some())
            .count()
    }

    pub fn pid(&self, slot: usize) -> u32 {
        self.slots[slot].child.id()
    }

    /// SIGKILLs the slot's process (after a last scrape) and starts a new one.
    pub async fn kill_and_restart(&mut self, slot: usize) -> std::io::Result<Killed> {
        self.scrape_slot(slot).await;
        let owner = owner_token(&self.slots[slot].log);
        let pid = self.slots[slot].child.id();
        let at = Instant::now();
        self.slots[slot].child.kill()?; // SIGKILL: no drain, no sweep, no flush
        self.slots[slot].child.wait()?;
        let fresh = self.spawn(slot)?;
        let old = std::mem::replace(&mut self.slots[slot], fresh);
        self.gone.add(&old.last);
        Ok(Killed {
            pid,
            owner,
            at,
            new_pid: self.slots[slot].child.id(),
        })
    }

    /// Restarts processes that exited on their own; returns what happened.
    pub fn supervise(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        for slot in 0..self.slots.len() {
            let status = match self.slots[slot].child.try_wait() {
                Ok(Some(status)) => status,
                _ => continue,
            };
            let tail = last_line(&self.slots[slot].log);
            let note = format!(
                "worker {slot} (pid {}) exited on its own ({status}): {tail}",
                self.slots[slot].child.id()
            );
            match self.spawn(slot) {
                Ok(fresh) => {
                    let old = std::mem::replace(&mut self.slots[slot], fresh);
                    self.gone.add(&old.last);
                    notes.push(format!("{note}; restarted as pid {}", self.pid(slot)));
                }
                Err(e) => notes.push(format!("{note}; restart failed: {e}")),
            }
            self.unexpected_exits.push(note);
        }
        notes
    }

    async fn scrape_slot(&mut self, slot: usize) {
        let port = self.slots[slot].metrics_port;
        let scraped = tokio::time::timeout(Duration::from_secs(2), scrape(port)).await;
        if let Ok(Ok(page)) = scraped
            && page.contains(m::CLAIMS_EXPIRED)
        {
            self.slots[slot].last = Counters::from_page(&page);
        }
    }

    /// Scrapes every live process.
    pub async fn scrape_all(&mut self) {
        for slot in 0..self.slots.len() {
            self.scrape_slot(slot).await;
        }
    }

    /// Gone processes' last counters plus the live ones' latest.
    pub fn totals(&self) -> Counters {
        let mut total = self.gone;
        for instance in &self.slots {
            total.add(&instance.last);
        }
        total
    }

    /// Each live process (slot, pid) with the requests it has claimed so far
    /// (as of the last scrape): a mark to check it keeps working after a fault.
    pub fn marks(&self) -> Vec<Mark> {
        (0..self.slots.len()).map(|slot| self.mark(slot)).collect()
    }

    pub fn mark(&self, slot: usize) -> Mark {
        Mark {
            slot,
            pid: self.pid(slot),
            requests: self.slots[slot].last.requests,
        }
    }

    /// Of the marks whose process still runs: how many, and those that have
    /// claimed nothing since.
    pub fn stalled(&self, marks: &[Mark]) -> (usize, Vec<Mark>) {
        let alive: Vec<&Mark> = marks
            .iter()
            .filter(|m| self.slots[m.slot].child.id() == m.pid)
            .collect();
        let stalled = alive
            .iter()
            .filter(|m| self.slots[m.slot].last.requests <= m.requests)
            .map(|m| **m)
            .collect();
        (alive.len(), stalled)
    }

    /// Lines of every worker log so far (killed processes' included) that
    /// contain any of `needles`.
    pub fn count_log_lines(&self, needles: &[&str]) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.logs) else {
            return 0;
        };
        entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("worker"))
            .map(|e| {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                text.lines()
                    .filter(|l| needles.iter().any(|n| l.contains(n)))
                    .count()
            })
            .sum()
    }

    /// SIGTERM to every process, then waits (polling, bounded) for each to
    /// drain and exit. Returns each exit status, or `None` if it had to be killed.
    pub async fn terminate(&mut self, bound: Duration) -> Vec<Option<ExitStatus>> {
        for instance in &self.slots {
            let _ = Command::new("kill")
                .args(["-TERM", &instance.child.id().to_string()])
                .status();
        }
        let give_up = Instant::now() + bound;
        let mut statuses = vec![None; self.slots.len()];
        while statuses.iter().any(Option::is_none) && Instant::now() < give_up {
            for (i, instance) in self.slots.iter_mut().enumerate() {
                if statuses[i].is_none() {
                    statuses[i] = instance.child.try_wait().ok().flatten();
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        for (i, instance) in self.slots.iter_mut().enumerate() {
            if statuses[i].is_none() {
                let _ = instance.child.kill();
                let _ = instance.child.wait();
            }
        }
        statuses
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for instance in &mut self.slots {
            if matches!(instance.child.try_wait(), Ok(None)) {
                let _ = instance.child.kill();
                let _ = instance.child.wait();
            }
        }
    }
}

/// The owner token a worker logs at start (`owner=<hex>`, or
/// `owner=<pod>/<hex>` where the worker knows its host name).
fn owner_token(log: &Path) -> Option<String> {
    let text = std::fs::read_to_string(log).ok()?;
    let at = text.find("owner=")? + "owner=".len();
    let token: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '-' | '_'))
        .collect();
    (!token.is_empty()).then_some(token)
}

fn last_line(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().last().unwrap_or("(empty log)").to_owned()
}
