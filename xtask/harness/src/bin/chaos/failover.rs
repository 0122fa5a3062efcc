//! The primary kill of a cluster or Sentinel run: SIGKILL the primary holding the queue's slot (or the Sentinel primary), time how long until the store serves the queue again, wait for the promotion, and start the killed node again as a replica.
//!
//! The killed node comes back (empty: these nodes keep no AOF) as a
//! replica of the promoted one, so the shard has a replica again: the
//! producer's check that a replica holds each submit, and the workers'
//! `replica_acks`, need one. Until it has synced those `WAIT`s fall short
//! (submits are repeated until one is on a replica; workers log and count
//! the shortfall).

use crate::faults::{Outcome, Targets, claims_again, stamp, wait_len};
use crate::topology::Deployment;
use crate::{QUEUE, results};
use claim_core::ClaimInspect;
use std::time::{Duration, Instant};

/// How long the store may take to serve the queue again after the kill.
const SERVE_BOUND: Duration = Duration::from_secs(40);
/// How soon every worker must claim again once the killed node is back.
const RIDE_THROUGH_BOUND: Duration = Duration::from_secs(15);

/// What the primary kill measured.
#[derive(Debug, Clone)]
pub struct Failover {
    /// The killed primary's port, and the slot of the queue it held (cluster).
    pub killed: u16,
    pub slot: Option<u16>,
    /// From the SIGKILL until a store call on the queue's slot succeeded.
    pub served_after: Option<Duration>,
    /// The replica promoted in its place.
    pub promoted: u16,
    /// From the SIGKILL until the killed node was back as a synced replica.
    pub rejoined_after: Duration,
}

pub async fn kill_primary(t: &mut Targets, out: &mut Outcome) -> Result<(), String> {
    let before = results::list_len(&mut t.raw).await.ok();
    let pending = t.store.keys().queue(QUEUE).pending;
    let (killed, slot) = tokio::task::block_in_place(|| match &mut t.deployment {
        Deployment::Cluster(c) => {
            let slot = c.key_slot(&pending)?;
            let port = c.primary_of_slot(slot)?;
            c.kill_primary_now(port)?;
            Ok((port, Some(slot)))
        }
        Deployment::Sentinel(g) => g.kill_primary_now().map(|port| (port, None)),
        Deployment::Standalone(_) => Err(std::io::Error::other(
            "a standalone server has no replica to promote",
        )),
    })
    .map_err(|e| format!("killing the primary: {e}"))?;
    let at = Instant::now();
    let holds = slot.map_or("the only primary".to_owned(), |s| {
        format!("the queue's slot {s}")
    });
    println!(
        "{} primary on port {killed} SIGKILLed ({holds}); waiting for its replica's promotion",
        stamp(t.start)
    );
    let served_after = served_again(t, at).await;
    let promoted = tokio::task::block_in_place(|| match &t.deployment {
        Deployment::Cluster(c) => c.wait_promoted(slot.unwrap_or_default(), killed),
        Deployment::Sentinel(g) => g.wait_failover(killed),
        Deployment::Standalone(_) => Err(std::io::Error::other("no failover in standalone")),
    })
    .map_err(|e| format!("waiting for the promotion: {e}"))?;
    println!(
        "{} replica on port {promoted} promoted; the store served the queue again {} after the kill",
        stamp(t.start),
        served_after.map_or("not within 40 s".to_owned(), |d| format!("{d:.2?}"))
    );
    tokio::task::block_in_place(|| match &mut t.deployment {
        Deployment::Cluster(c) => c.restart_node(killed),
        Deployment::Sentinel(g) => g.restart_node(killed),
        Deployment::Standalone(_) => Ok(()),
    })
    .map_err(|e| format!("starting the killed primary again as a replica: {e}"))?;
    let rejoined_after = at.elapsed();
    let after = wait_len(&mut t.raw).await;
    println!(
        "{} the killed node is back on port {killed} as a synced replica ({rejoined_after:.2?} after the kill); result list {} → {} records",
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
    out.ride_through.push(tokio::spawn(claims_again(
        t.fleet.clone(),
        marks,
        RIDE_THROUGH_BOUND,
    )));
    out.failover = Some(Failover {
        killed,
        slot,
        served_after,
        promoted,
        rejoined_after,
    });
    Ok(())
}

/// Polls a read of the queue's slot until it succeeds (bounded); the time
/// since `at`, or `None` when the bound ran out.
async fn served_again(t: &Targets, at: Instant) -> Option<Duration> {
    while at.elapsed() < SERVE_BOUND {
        let call = tokio::time::timeout(Duration::from_secs(2), t.store.depths(QUEUE)).await;
        if matches!(call, Ok(Ok(_))) {
            return Some(at.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}
