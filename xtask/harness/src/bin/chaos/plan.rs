//! The command line and the run's plan: sizes, timings, and the seeded schedule of faults.
//!
//! Every random choice of the run (fault times, victims, which requests are
//! resubmitted or cancelled, the gateway's latencies and failures) comes
//! from generators seeded by `--seed`, so a seed names a run. Thread and
//! network timing still differ between runs of one seed.

use clap::Parser;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::ops::Range;
use std::path::PathBuf;
use std::time::Duration;

/// `chaos`: real worker processes, real Redis, and faults; the verdict is exit code 0.
#[derive(Debug, Parser)]
#[command(
    name = "chaos",
    about = "SIGKILLs workers, restarts redis-server under AOF (or SIGKILLs a primary of a cluster or Sentinel group) and cuts a worker off from Redis while requests flow; fails unless nothing is lost and every generation has exactly one record"
)]
pub struct Args {
    /// Worker processes [default: 3, or 2 with --short].
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Submissions (generations), resubmissions included [default: 20000, or 1500 with --short].
    #[arg(long, value_name = "M")]
    pub requests: Option<usize>,
    /// Seed of every random choice [default: from the clock; printed either way].
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// The CI size: fewer requests, one worker kill, the Redis restart (or
    /// primary kill) and the proxy cut (standalone only).
    #[arg(long)]
    pub short: bool,
    /// Where Redis runs: `standalone` (one redis-server under AOF),
    /// `cluster` (three primaries with a replica each) or `sentinel` (a
    /// primary, a replica, three sentinels). Cluster and Sentinel SIGKILL a
    /// primary mid-run instead of restarting redis-server, and have no proxy cut.
    #[arg(long, value_name = "TOPOLOGY", default_value = "standalone", value_parser = ["standalone", "cluster", "sentinel"])]
    pub topology: String,
    /// Replicas the workers `WAIT` for after each claim and ack batch
    /// (their `replica_acks`; cluster and sentinel only).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1))]
    pub replica_acks: u32,
    /// Which primary the cluster run SIGKILLs: the one holding the queue's
    /// slot (`queue`), the result list's (`list`), or first the queue's
    /// and then the list's (`both`). Cluster only.
    #[arg(long, value_name = "WHICH", default_value = "queue", value_parser = ["queue", "list", "both"])]
    pub kill: String,
    /// The `async-worker` binary [default: `../async-worker` next to this program's directory].
    #[arg(long, value_name = "PATH")]
    pub worker_bin: Option<PathBuf>,
    /// Keep the worker logs and Redis data directory even when the run passes.
    #[arg(long)]
    pub keep_logs: bool,
    /// Redis AOF fsync policy during the run: `always` (nothing acknowledged
    /// is lost on a Redis SIGKILL) or `everysec` (the last second may be;
    /// extra records are then counted and reported, not failed on).
    #[arg(long, value_name = "POLICY", default_value = "always", value_parser = ["always", "everysec"])]
    pub appendfsync: String,
    /// Share of the submissions made by reference, as Go's producer does
    /// with `WithPayloadKeys` (payload at `request-payload:<id>:<token>`,
    /// `"payload":null` in the member).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.5, value_parser = fraction)]
    pub payload_ref: f64,
    /// Share of those submitted with no payload stored: each must end
    /// `PAYLOAD_UNAVAILABLE` (or `CANCELLED`, when a cancel got there first).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.02, value_parser = fraction)]
    pub missing_payloads: f64,
}

fn fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err("expected a fraction from 0 to 1, such as 0.5".into()),
    }
}

/// One fault, at an offset from the start of submissions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    /// SIGKILL the worker in this slot and start a new one there.
    KillWorker(usize),
    /// SIGKILL redis-server, leave it down a moment, start it on the same data dir.
    RestartRedis,
    /// Cut the proxied worker off from Redis for [`Plan::cut_for`].
    CutProxy,
    /// SIGKILL a primary (cluster: the one holding the queue's slot, or
    /// the result list's, or both in turn, by `--kill`; Sentinel: the
    /// primary), let its replica be promoted, then start the killed node
    /// again as a replica.
    KillPrimary,
}

/// Which primaries a cluster run's primary kill strikes, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// The one holding the queue's slot (Sentinel: the primary).
    Queue,
    /// The one holding the result list's slot: pushes and markers.
    List,
    /// The queue's, then (once its node is back as a replica) the list's.
    Both,
}

impl Kill {
    /// The slots' roles, in kill order: true for the queue's.
    pub fn queue_first(self) -> &'static [bool] {
        match self {
            Kill::Queue => &[true],
            Kill::List => &[false],
            Kill::Both => &[true, false],
        }
    }
}

/// Where the run's Redis runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Standalone,
    Cluster,
    Sentinel,
}

impl Layout {
    /// The transport config's `mode`.
    pub fn mode(self) -> &'static str {
        match self {
            Layout::Standalone => "standalone",
            Layout::Cluster => "cluster",
            Layout::Sentinel => "sentinel",
        }
    }

    /// True for cluster and Sentinel: data on replicas, no persistence.
    pub fn replicated(self) -> bool {
        self != Layout::Standalone
    }
}

/// Everything the run does, decided before it starts.
#[derive(Debug, Clone)]
pub struct Plan {
    pub seed: u64,
    pub short: bool,
    pub workers: usize,
    pub requests: usize,
    /// Submissions per second (the producer paces itself).
    pub rate: f64,
    pub lease: Duration,
    pub reclaim_interval: Duration,
    pub concurrency: usize,
    /// Fraction of submissions that resubmit an earlier id with a new token.
    pub resubmit_fraction: f64,
    /// Chance, after each submission, that the producer cancels a recent id.
    pub cancel_fraction: f64,
    /// Share of submissions made by reference, and of those, the share
    /// submitted with no payload stored.
    pub payload_ref: f64,
    pub missing_payloads: f64,
    /// How long redis-server stays down between its SIGKILL and its restart.
    pub redis_down: Duration,
    /// The worker slot whose Redis URL is the proxy.
    pub cut_slot: usize,
    pub cut_for: Duration,
    /// Faults by offset from the start, in order.
    pub faults: Vec<(Duration, Fault)>,
    /// Seeds of the producer and the gateway.
    pub producer_seed: u64,
    pub gateway_seed: u64,
    pub worker_bin: PathBuf,
    pub keep_logs: bool,
    /// The AOF fsync policy: true for `everysec`, false for `always`.
    pub everysec: bool,
    pub layout: Layout,
    /// The workers' `replica_acks`.
    pub replica_acks: u32,
    /// Which primaries the primary kill strikes (cluster).
    pub kill: Kill,
}

impl Plan {
    pub fn from_args(args: &Args) -> Result<Plan, String> {
        let seed = args.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos() as u64
                % 1_000_000_000
        });
        let workers = args.workers.unwrap_or(if args.short { 2 } else { 3 });
        let requests = args
            .requests
            .unwrap_or(if args.short { 1500 } else { 20_000 });
        if workers < 2 {
            return Err(format!(
                "--workers {workers}: at least 2 are needed (a survivor reclaims a cut-off worker's claims)"
            ));
        }
        if requests < 100 {
            return Err(format!("--requests {requests}: give at least 100"));
        }
        let layout = match args.topology.as_str() {
            "cluster" => Layout::Cluster,
            "sentinel" => Layout::Sentinel,
            _ => Layout::Standalone,
        };
        if layout == Layout::Standalone && args.replica_acks > 0 {
            return Err(format!(
                "--replica-acks {}: a standalone server has no replica to wait for; use it with --topology cluster or sentinel",
                args.replica_acks
            ));
        }
        let kill = match args.kill.as_str() {
            "list" => Kill::List,
            "both" => Kill::Both,
            _ => Kill::Queue,
        };
        if layout != Layout::Cluster && kill != Kill::Queue {
            return Err(format!(
                "--kill {}: only a cluster run has a result list on a primary of its own; use it with --topology cluster",
                args.kill
            ));
        }
        if layout.replicated() && args.appendfsync != "always" {
            return Err(format!(
                "--appendfsync {} applies to the standalone server only: cluster and Sentinel nodes keep their data on replicas, without AOF; drop the flag",
                args.appendfsync
            ));
        }
        let worker_bin = match &args.worker_bin {
            Some(path) => path.clone(),
            None => sibling_worker_bin()?,
        };
        if !worker_bin.is_file() {
            return Err(format!(
                "{} does not exist: build it first (`cargo build --release -p async-worker --bin async-worker`) or pass --worker-bin",
                worker_bin.display()
            ));
        }
        let mut rng = StdRng::seed_from_u64(seed);
        let mut plan = Plan {
            seed,
            short: args.short,
            workers,
            requests,
            rate: if args.short { 100.0 } else { 500.0 },
            lease: Duration::from_secs(3),
            reclaim_interval: Duration::from_millis(500),
            concurrency: 128,
            resubmit_fraction: 0.03,
            cancel_fraction: 0.02,
            payload_ref: args.payload_ref,
            missing_payloads: args.missing_payloads,
            redis_down: Duration::from_secs(1),
            cut_slot: rng.random_range(0..workers),
            cut_for: Duration::from_secs(if args.short { 4 } else { 5 }),
            faults: Vec::new(),
            producer_seed: rng.random(),
            gateway_seed: rng.random(),
            worker_bin,
            keep_logs: args.keep_logs,
            everysec: args.appendfsync == "everysec",
            layout,
            replica_acks: args.replica_acks,
            kill,
        };
        plan.faults = plan.schedule(&mut rng);
        Ok(plan)
    }

    /// How long the producer takes to submit everything at its pace.
    pub fn submit_for(&self) -> Duration {
        Duration::from_secs_f64(self.requests as f64 / self.rate)
    }

    /// The longest a crashed worker's claim should wait: lease plus reclaim interval.
    pub fn redelivery_bound(&self) -> Duration {
        self.lease + self.reclaim_interval
    }

    /// How long Redis is out of service at its fault: the restart's down
    /// time; a failover's detection and promotion (about 3 s here, with a
    /// 1 s node timeout) with room to spare, once per primary killed.
    pub fn outage(&self) -> Duration {
        if self.layout.replicated() {
            Duration::from_secs(6) * self.kill.queue_first().len() as u32
        } else {
            self.redis_down
        }
    }

    /// The Redis restart (or primary kill) at half the submission time,
    /// the proxy cut (standalone only) at 65%, worker kills every 3–6 s
    /// (one with `--short`). No kill falls in the Redis outage or in the
    /// redelivery window before it, so each kill's redelivery time measures
    /// leases and the reclaimer, not the outage.
    fn schedule(&self, rng: &mut StdRng) -> Vec<(Duration, Fault)> {
        let total = self.submit_for().as_secs_f64();
        let (restart, cut) = (0.50 * total, 0.65 * total);
        let mut faults = if self.layout.replicated() {
            vec![(restart, Fault::KillPrimary)]
        } else {
            vec![(restart, Fault::RestartRedis), (cut, Fault::CutProxy)]
        };
        let quiet_before = (self.redelivery_bound() + Duration::from_secs(2)).as_secs_f64();
        let quiet_after = (self.outage() + Duration::from_secs(2)).as_secs_f64();
        let clear = |t: f64| t < restart - quiet_before || t > restart + quiet_after;
        // The cut worker is spared from the cut until its aftermath is seen:
        // its lost leases, its late acks, its reconnect.
        let spare = if self.layout.replicated() {
            0.0..0.0
        } else {
            cut - 1.0..cut + (self.cut_for + self.lease).as_secs_f64() + 3.0
        };
        let mut at = rng.random_range(1.0..1.8);
        while at < total {
            if clear(at) {
                let victim = if spare.contains(&at) {
                    let v = rng.random_range(0..self.workers - 1);
                    if v >= self.cut_slot { v + 1 } else { v }
                } else {
                    rng.random_range(0..self.workers)
                };
                faults.push((at, Fault::KillWorker(victim)));
                if self.short {
                    break;
                }
            }
            at += rng.random_range(3.0..6.0);
        }
        faults.sort_by(|a, b| a.0.total_cmp(&b.0));
        faults
            .into_iter()
            .map(|(t, f)| (Duration::from_secs_f64(t), f))
            .collect()
    }

    /// The stretches after each fault in which leases may expire because
    /// of it: until its lease ran out and a reclaimer ran, plus a scrape.
    /// An expiry outside them means a live worker's heartbeat failed.
    pub fn expiry_windows(&self) -> Vec<Range<Duration>> {
        let settle = self.lease + self.reclaim_interval + Duration::from_millis(3500);
        self.faults
            .iter()
            .map(|(at, fault)| {
                let outage = match fault {
                    Fault::KillWorker(_) => Duration::ZERO,
                    Fault::RestartRedis | Fault::KillPrimary => {
                        self.outage() + Duration::from_secs(1)
                    }
                    Fault::CutProxy => self.cut_for,
                };
                *at..*at + outage + settle
            })
            .collect()
    }

    pub fn kills(&self) -> usize {
        self.faults
            .iter()
            .filter(|(_, f)| matches!(f, Fault::KillWorker(_)))
            .count()
    }
}

/// `target/<profile>/async-worker`, beside `target/<profile>/chaos`.
fn sibling_worker_bin() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    exe.parent()
        .map(|profile| profile.join("async-worker"))
        .ok_or_else(|| "cannot find the async-worker binary: pass --worker-bin".to_owned())
}
