//! Carrying out the plan's faults: worker SIGKILLs, the redis-server restart, the proxy cut, and (cluster, Sentinel) the primary kill of [`crate::failover`].

use crate::failover::{self, Failover};
use crate::fleet::{Fleet, Mark};
use crate::plan::{Fault, Plan};
use crate::proxy::{CutReport, Proxy};
use crate::raw::Raw;
use crate::redelivery::{self, KillTrace};
use crate::results;
use crate::topology::Deployment;
use claim_redis::RedisStore;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

/// How long one kill's orphans are tracked at most.
const TRACK_BOUND: Duration = Duration::from_secs(60);
/// How soon every worker must claim again after the Redis restart, its cut or a killed node's return.
const RIDE_THROUGH_BOUND: Duration = Duration::from_secs(15);

/// Everything the faults act on.
pub struct Targets {
    pub plan: Plan,
    pub start: Instant,
    pub fleet: Arc<Mutex<Fleet>>,
    pub deployment: Deployment,
    /// The proxy one worker reaches Redis through (standalone only).
    pub proxy: Option<Arc<Proxy>>,
    pub store: RedisStore,
    pub raw: Raw,
}

/// A ride-through check: workers checked (still running at its end), and
/// those of them that never claimed again.
pub type RideThrough = (usize, Vec<Mark>);

/// What the faults did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub kills: Vec<(Duration, JoinHandle<KillTrace>)>,
    /// Result-list length just before redis-server was killed and once it was back.
    pub records_across_restart: Option<(usize, usize)>,
    pub redis_back_after: Option<Duration>,
    /// Ride-through check: after the Redis restart every worker must claim
    /// again (see [`claims_again`]).
    pub ride_through: Vec<JoinHandle<RideThrough>>,
    /// The proxy cut's report and its ride-through check.
    pub cut: Option<JoinHandle<(CutReport, RideThrough)>>,
    /// The primary kills (cluster, Sentinel), in order.
    pub failovers: Vec<Failover>,
}

/// `[  12.3s]`: the time since submissions began.
pub fn stamp(start: Instant) -> String {
    format!("[{:6.1}s]", start.elapsed().as_secs_f64())
}

/// Runs every fault at its time; returns when the last one has started.
pub async fn run(t: &mut Targets) -> Result<Outcome, String> {
    let mut out = Outcome::default();
    for (at, fault) in t.plan.faults.clone() {
        tokio::time::sleep_until((t.start + at).into()).await;
        match fault {
            Fault::KillWorker(slot) => kill(t, slot, &mut out).await?,
            Fault::RestartRedis => restart_redis(t, &mut out).await?,
            Fault::CutProxy => out.cut = cut(t).map(tokio::spawn),
            Fault::KillPrimary => failover::kill_primary(t, &mut out).await?,
        }
    }
    Ok(out)
}

/// Cuts the proxied worker off, then checks it claims again once reconnected.
fn cut(t: &Targets) -> Option<impl Future<Output = (CutReport, RideThrough)> + use<>> {
    let (proxy, length, start) = (t.proxy.clone()?, t.plan.cut_for, t.start);
    let (fleet, slot) = (t.fleet.clone(), t.plan.cut_slot);
    println!(
        "{} proxy cut: worker {slot} cut off from Redis for {length:?} ({:?} blackhole, then refused)",
        stamp(start),
        length / 2
    );
    Some(async move {
        let report = proxy.cut(length).await;
        println!(
            "{} proxy cut over: {} open connections severed, {} connection attempts turned away; forwarding again",
            stamp(start),
            report.severed,
            report.turned_away
        );
        let mark = {
            let mut fleet = fleet.lock().await;
            fleet.scrape_all().await;
            fleet.mark(slot)
        };
        (
            report,
            claims_again(fleet, vec![mark], RIDE_THROUGH_BOUND).await,
        )
    })
}

async fn kill(t: &mut Targets, slot: usize, out: &mut Outcome) -> Result<(), String> {
    let killed = t
        .fleet
        .lock()
        .await
        .kill_and_restart(slot)
        .await
        .map_err(|e| format!("killing worker {slot}: {e}"))?;
    let when = killed.at.duration_since(t.start);
    println!(
        "{} SIGKILL worker {slot} (pid {}); restarted as pid {}",
        stamp(t.start),
        killed.pid,
        killed.new_pid
    );
    let Some(owner) = killed.owner else {
        println!("           (its owner token was not in its log yet: its claims are not traced)");
        return Ok(());
    };
    let store = t.store.clone();
    let handle = tokio::spawn(redelivery::track(store, owner, killed.at, TRACK_BOUND));
    out.kills.push((when, handle));
    Ok(())
}

/// The AOF fsync policy the run uses, as Redis names it.
pub fn fsync_policy(plan: &crate::plan::Plan) -> &'static str {
    if plan.everysec { "everysec" } else { "always" }
}

/// Sets the plan's fsync policy on the server (it starts, and restarts,
/// with `always`; `CONFIG SET` switches it at run time).
pub async fn apply_fsync_policy(plan: &crate::plan::Plan, raw: &mut Raw) -> Result<(), String> {
    if !plan.everysec {
        return Ok(());
    }
    let mut cmd = redis::cmd("CONFIG");
    cmd.arg("SET").arg("appendfsync").arg("everysec");
    // The first call after a restart meets the old, broken connection; `Raw` reconnects on the next.
    let mut last = None;
    for _ in 0..5 {
        match raw.query::<()>(&cmd).await {
            Ok(()) => return Ok(()),
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!(
        "CONFIG SET appendfsync everysec: {}",
        last.map_or_else(String::new, |e| e.to_string())
    ))
}

async fn restart_redis(t: &mut Targets, out: &mut Outcome) -> Result<(), String> {
    let Deployment::Standalone(server) = &mut t.deployment else {
        return Err("the redis-server restart is a standalone fault".into());
    };
    let before = results::list_len(&mut t.raw).await.ok();
    server.kill();
    println!(
        "{} redis-server SIGKILLed (AOF appendfsync {}); down for {:?}",
        stamp(t.start),
        fsync_policy(&t.plan),
        t.plan.redis_down
    );
    tokio::time::sleep(t.plan.redis_down).await;
    let launched = Instant::now();
    tokio::task::block_in_place(|| server.restart())
        .map_err(|e| format!("restarting redis-server: {e}"))?;
    let back = launched.elapsed();
    out.redis_back_after = Some(back);
    apply_fsync_policy(&t.plan, &mut t.raw).await?;
    let back = format!(
        "redis-server restarted on the same data dir; answering PING after {back:.2?} (AOF replay)"
    );
    after_outage(t, out, &back, before).await;
    Ok(())
}

/// Once the store is `back` (what came back, for the log): prints the
/// result list's length before → after and keeps both for the report, then
/// watches every worker claim again (see [`claims_again`]).
pub async fn after_outage(t: &mut Targets, out: &mut Outcome, back: &str, before: Option<usize>) {
    let after = wait_len(&mut t.raw).await;
    println!(
        "{} {back}; result list {} → {} records",
        stamp(t.start),
        before.map_or("?".into(), |n| n.to_string()),
        after.map_or("?".into(), |n| n.to_string()),
    );
    if let (Some(before), Some(after)) = (before, after) {
        out.records_across_restart = Some((before, after));
    }
    let marks = {
        let mut fleet = t.fleet.lock().await;
        fleet.scrape_all().await;
        fleet.marks()
    };
    let fleet = t.fleet.clone();
    out.ride_through
        .push(tokio::spawn(claims_again(fleet, marks, RIDE_THROUGH_BOUND)));
}

/// The result list's length once Redis answers (polling, bounded).
pub async fn wait_len(raw: &mut Raw) -> Option<usize> {
    let give_up = Instant::now() + Duration::from_secs(10);
    while Instant::now() < give_up {
        if let Ok(n) = results::list_len(raw).await {
            return Some(n);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

/// Polls (bounded) until each marked process that still runs has claimed
/// more requests than at its mark. Returns how many were checked (still
/// running at the end) and those that never claimed again.
pub async fn claims_again(
    fleet: Arc<Mutex<Fleet>>,
    marks: Vec<Mark>,
    bound: Duration,
) -> RideThrough {
    let give_up = Instant::now() + bound;
    loop {
        let (checked, stalled) = {
            let mut fleet = fleet.lock().await;
            fleet.scrape_all().await;
            fleet.stalled(&marks)
        };
        if stalled.is_empty() || Instant::now() > give_up {
            return (checked, stalled);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
