//! The closing figures of a chaos run and its verdict.

use crate::failover::Failover;
use crate::fleet::{Counters, Mark};
use crate::payloads::PayloadCheck;
use crate::plan::Plan;
use crate::plan::{Kill, Layout};
use crate::producer::Ledger;
use crate::redelivery::{KillTrace, quantile};
use crate::results::{Leftovers, Records};
use std::time::Duration;

/// Everything the verdict is made of.
#[derive(Debug)]
pub struct Figures<'a> {
    pub plan: &'a Plan,
    pub ledger: &'a Ledger,
    pub records: &'a Records,
    pub counters: Counters,
    /// Accepted generations without a terminal marker.
    pub unmarked: usize,
    pub leftovers: Leftovers,
    /// Payloads stored apart and record tokens.
    pub payloads: PayloadCheck,
    pub kills: Vec<(Duration, KillTrace)>,
    pub records_across_restart: Option<(usize, usize)>,
    pub redis_back_after: Option<Duration>,
    /// The primary kill (cluster, Sentinel).
    pub failovers: Vec<Failover>,
    /// Where the queue and the result list live.
    pub placement: String,
    /// The workers' `WAIT`s for replicas: sent, and those that fell short
    /// (from their logs).
    pub replica_shortfalls: usize,
    pub cut: Option<(usize, usize)>,
    /// Workers that exited on their own during the run.
    pub unexpected_exits: usize,
    /// Final SIGTERM: workers that did not exit 0 within the bound.
    pub unclean_exits: usize,
    /// Processes checked for claiming again after the Redis restart or the
    /// cut, and those of them that claimed nothing more.
    pub ride_through: (usize, Vec<Mark>),
    /// Lease expiries counted outside every fault's window (see
    /// [`Plan::expiry_windows`]): a live worker's heartbeats fell behind.
    pub unprompted_expiries: u64,
    pub elapsed: Duration,
}

impl Figures<'_> {
    /// Whether the run's fault may undo acknowledged writes: a Redis
    /// SIGKILL under `everysec`, or a Sentinel failover (asynchronous
    /// replication of the one primary). An undone ack redelivers its
    /// request, which is answered again: extra records are then counted
    /// and explained, not failed on. In a cluster whose kill strikes the
    /// queue's primary only, not the result list's, an undone claim drop
    /// redelivers and the marker beside the list suppresses the second
    /// record, so extra records stay a failure there; a kill of the list's
    /// primary (`--kill list|both`) undoes pushes with their markers.
    pub fn acks_may_be_undone(&self) -> bool {
        self.plan.everysec
            || self.plan.layout == Layout::Sentinel
            || (self.plan.layout == Layout::Cluster && self.plan.kill != Kill::Queue)
    }

    /// Accepted generations that have no record.
    pub fn lost(&self) -> usize {
        self.records.unanswered(self.ledger).max(self.unmarked)
    }

    /// Records beyond one per accepted generation (duplicates, unknown ids, unreadable).
    pub fn extra(&self) -> usize {
        let over: usize = self
            .records
            .per_id
            .iter()
            .map(|(id, n)| {
                let gens = self.ledger.generations.get(id).map_or(0, Vec::len);
                n.saturating_sub(gens)
            })
            .sum();
        over + self.records.unreadable
    }

    /// Why the run failed; empty when it passed.
    pub fn failures(&self) -> Vec<String> {
        let mut why = Vec::new();
        if self.lost() > 0 {
            why.push(format!("{} accepted generations lost", self.lost()));
        }
        // Under everysec a Redis SIGKILL may lose the last second of
        // writes: an ack that landed there is undone (its claim is back, its
        // record and marker gone), so the request is redelivered and
        // answered again. A consumer that read the first record sees two:
        // counted and reported, not a failure. Lost must still be 0.
        if self.extra() > 0 && !self.acks_may_be_undone() {
            why.push(format!(
                "{} records beyond one per generation",
                self.extra()
            ));
        }
        why.extend(self.payloads.failures());
        if !self.leftovers.settled() {
            why.push(format!("left in Redis: {:?}", self.leftovers));
        }
        if let Some((before, after)) = self.records_across_restart
            && after < before
            && !self.acks_may_be_undone()
        {
            why.push(format!(
                "the Redis restart or failover lost records: {before} before, {after} after"
            ));
        }
        if self.plan.layout.replicated()
            && self.failovers.len() < self.plan.kill.queue_first().len()
        {
            why.push("the primary kill did not happen".into());
        }
        for m in &self.ride_through.1 {
            why.push(format!(
                "worker {} (pid {}) claimed nothing after the Redis restart or the cut",
                m.slot, m.pid
            ));
        }
        if self.unexpected_exits > 0 {
            why.push(format!(
                "{} workers exited on their own (see their logs)",
                self.unexpected_exits
            ));
        }
        if self.unclean_exits > 0 {
            why.push(format!(
                "{} workers did not drain and exit 0 on SIGTERM",
                self.unclean_exits
            ));
        }
        why
    }

    pub fn print(&self) {
        let p = self.plan;
        let l = self.ledger;
        let c = &self.counters;
        let delivery_limit = self
            .records
            .codes
            .get("DELIVERY_LIMIT")
            .copied()
            .unwrap_or(0);
        let samples: Vec<Duration> = self
            .kills
            .iter()
            .flat_map(|(_, k)| k.times.clone())
            .collect();
        let orphans: usize = self.kills.iter().map(|(_, k)| k.orphans).sum();
        let unresolved: usize = self.kills.iter().map(|(_, k)| k.unresolved).sum();
        let ms = |d: Option<Duration>| {
            d.map_or("-".into(), |d| format!("{:.0} ms", d.as_secs_f64() * 1e3))
        };
        let codes: Vec<String> = self
            .records
            .codes
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        println!(
            "\nchaos: seed {}, {}, {} workers, {} requests, lease {:?}, reclaim interval {:?}, {:.1} s",
            p.seed,
            p.layout.mode(),
            p.workers,
            p.requests,
            p.lease,
            p.reclaim_interval,
            self.elapsed.as_secs_f64()
        );
        let rows: Vec<(&str, String)> = vec![
            (
                "accepted",
                format!(
                    "{} generations of {} ids ({} resubmissions with a new token)",
                    l.accepted,
                    l.generations.len(),
                    l.resubmissions
                ),
            ),
            ("redis", self.placement.clone()),
            (
                "producer cancels",
                format!(
                    "{} sent, {} marked an active generation; {} producer calls failed and were repeated",
                    l.cancels, l.cancels_marked, l.failed_calls
                ),
            ),
            (
                "terminal records",
                format!("{} ({})", self.records.seen, codes.join(", ")),
            ),
            (
                "duplicates suppressed",
                format!(
                    "{} results; {} pending copies dropped at claim; {} own retried acks had landed",
                    c.duplicates_suppressed, c.pending_duplicates_dropped, c.retried_acks_landed
                ),
            ),
            (
                "redelivered",
                format!("{}", (c.claims_expired - c.dead_lettered).max(0.0)),
            ),
            ("leases lost", format!("{}", c.lease_lost)),
            (
                "unprompted expiries",
                format!(
                    "{} (leases that expired outside the faults' windows; 1% of gateway calls outlast two leases)",
                    self.unprompted_expiries
                ),
            ),
            ("retries parked", format!("{}", c.retries)),
            ("by reference", self.payloads.row()),
            ("lost", self.lost().to_string()),
            (
                "undone records",
                format!(
                    "{} records read and later gone from the list (cut back by the Redis restart or failover)",
                    self.records.undone
                ),
            ),
            (
                "dead-lettered",
                format!(
                    "{} ({} DELIVERY_LIMIT records)",
                    self.leftovers.dead, delivery_limit
                ),
            ),
            (
                "generations ≠ 1 record",
                format!("{} lost, {} extra records", self.lost(), self.extra()),
            ),
            (
                "worker kills",
                format!(
                    "{} SIGKILLs, {orphans} claims orphaned, {unresolved} not redelivered within 60 s",
                    self.kills.len()
                ),
            ),
            (
                "kill → redelivery",
                format!(
                    "p50 {}, p99 {}, max {} over {} claims (lease + reclaim interval = {} ms, then a claim)",
                    ms(quantile(&samples, 0.5)),
                    ms(quantile(&samples, 0.99)),
                    ms(quantile(&samples, 1.0)),
                    samples.len(),
                    p.redelivery_bound().as_millis()
                ),
            ),
            (
                "replicas",
                format!(
                    "workers' replica_acks {}: {} WAITs fell short (logged by the workers); producer: {} submits repeated until a replica held them",
                    p.replica_acks, self.replica_shortfalls, l.unreplicated
                ),
            ),
            (
                "primary kill",
                if self.failovers.is_empty() {
                    "did not run".into()
                } else {
                    let kills: Vec<String> = self
                        .failovers
                        .iter()
                        .map(|f| {
                            let role = if f.list_slot { "result list's" } else { "queue's" };
                            format!(
                                "port {}{} SIGKILLed; store served that slot again after {}; replica on port {} promoted; killed node back as a synced replica after {:.1} s",
                                f.killed,
                                f.slot.map_or(String::new(), |s| format!(" ({role} slot {s})")),
                                ms(f.served_after),
                                f.promoted,
                                f.rejoined_after.as_secs_f64(),
                            )
                        })
                        .collect();
                    format!(
                        "{}; records {} before → {} after",
                        kills.join("; then "),
                        self.records_across_restart
                            .map_or("?".into(), |r| r.0.to_string()),
                        self.records_across_restart
                            .map_or("?".into(), |r| r.1.to_string()),
                    )
                },
            ),
            (
                "redis restart",
                match (self.records_across_restart, self.redis_back_after) {
                    (Some((b, a)), Some(back)) => format!(
                        "down {:?}, back {back:.2?} after launch; records {b} before → {a} after",
                        p.redis_down
                    ),
                    _ => "not measured".into(),
                },
            ),
            (
                "proxy cut",
                match self.cut {
                    Some((severed, turned)) => format!(
                        "{:?}: {severed} connections severed, {turned} attempts turned away",
                        p.cut_for
                    ),
                    None => "did not run".into(),
                },
            ),
            (
                "ride-through",
                format!(
                    "{} of {} workers claimed again within 15 s ({})",
                    self.ride_through.0 - self.ride_through.1.len(),
                    self.ride_through.0,
                    if p.layout.replicated() {
                        "every worker once the killed primary was back as a replica"
                    } else {
                        "every worker after the Redis restart, the cut worker after the cut"
                    }
                ),
            ),
            (
                "worker restarts",
                format!(
                    "{} exited on their own and were restarted",
                    self.unexpected_exits
                ),
            ),
            (
                "left in Redis",
                format!(
                    "{} pending, {} claimed, {} parked",
                    self.leftovers.pending, self.leftovers.claimed, self.leftovers.retrying
                ),
            ),
        ];
        // Each topology's own faults: the restart and the proxy cut on one
        // server, the primary kill and replicas on a cluster or Sentinel.
        let other = if p.layout.replicated() {
            ["redis restart", "proxy cut"]
        } else {
            ["primary kill", "replicas"]
        };
        for (name, value) in rows.into_iter().filter(|(name, _)| !other.contains(name)) {
            println!("  {name:<24} {value}");
        }
        if p.layout == Layout::Sentinel {
            println!(
                "  sentinel: {} records beyond one per generation, {} records read then gone from the list (an ack the killed primary had not yet sent to its replica is undone by the failover, with its record: the request is redelivered and answered again, and a consumer that had read the first record sees two)",
                self.extra(),
                self.records.undone
            );
        }
        if p.layout == Layout::Cluster {
            println!(
                "  cluster: {} records beyond one per generation; {} second results kept out by the push-once marker in the list's slot (requests redelivered after a claim or claim drop the failover undid, or after a worker kill); {} acks a worker retried after the first had landed, recognised as its own",
                self.extra(),
                self.counters.duplicates_suppressed,
                self.counters.retried_acks_landed
            );
        }
        if p.everysec {
            let (before, after) = self.records_across_restart.unwrap_or_default();
            println!(
                "  everysec: {} records beyond one per generation (acks undone by the Redis SIGKILL, redelivered); result list {before} → {after} across the restart",
                self.extra()
            );
        }
        let failures = self.failures();
        if failures.is_empty() {
            let keys = match self.payloads.keys_left_to_expire {
                0 => "no payload key left".to_owned(),
                n => format!("no payload key left but {n} with their expiry after the failover"),
            };
            println!(
                "  PASS: lost = 0 and every accepted generation has exactly one record, with its request_token; missing payloads PAYLOAD_UNAVAILABLE, {keys} (seed {})",
                p.seed
            );
        } else {
            println!("  FAIL (seed {}): {}", p.seed, failures.join("; "));
        }
    }
}
