//! The primary kill of a cluster or Sentinel run: SIGKILL the primary holding the queue's slot, the result list's, or both in turn (`--kill`; Sentinel: the primary), time how long until the store serves the queue again, wait for the promotion, and start the killed node again as a replica.
//!
//! Killing the list's primary strikes the split ack between its push (in
//! the list's slot) and its claim drop (in the queue's): a push the
//! primary had not yet sent to its replica is undone with its marker. With
//! `replica_acks` the worker waits for the push to be replicated before it
//! drops the claim, so an undone push leaves the claim, which is
//! redelivered and answered again: lost stays 0 (a consumer that read the
//! undone record sees a second one: extra records, counted, not failed).
//!
//! The killed node comes back (empty: these nodes keep no AOF) as a
//! replica of the promoted one, so the shard has a replica again: the
//! producer's check that a replica holds each submit, and the workers'
//! `replica_acks`, need one. Until it has synced those `WAIT`s fall short
//! (submits are repeated until one is on a replica; workers log and count
//! the shortfall).

use crate::faults::{Outcome, Targets, after_outage, stamp};
use crate::plan::Kill;
use crate::topology::Deployment;
use crate::{QUEUE, RESULTS, results};
use claim_core::ClaimInspect;
use std::time::{Duration, Instant};

/// How long the store may take to serve the queue again after the kill.
const SERVE_BOUND: Duration = Duration::from_secs(40);

/// What the primary kill measured.
#[derive(Debug, Clone)]
pub struct Failover {
    /// The killed primary's port, and the slot it held (cluster): the
    /// queue's, or the result list's when `list_slot`.
    pub killed: u16,
    pub slot: Option<u16>,
    pub list_slot: bool,
    /// From the SIGKILL until a store call on the killed slot succeeded.
    pub served_after: Option<Duration>,
    /// The replica promoted in its place.
    pub promoted: u16,
    /// From the SIGKILL until the killed node was back as a synced replica.
    pub rejoined_after: Duration,
}

/// The plan's primary kills, in turn (`--kill both`: the queue's, then,
/// once its node is back as a replica, the list's).
pub async fn kill_primary(t: &mut Targets, out: &mut Outcome) -> Result<(), String> {
    let kill = match t.deployment {
        Deployment::Cluster(_) => t.plan.kill,
        _ => Kill::Queue,
    };
    for &queue in kill.queue_first() {
        kill_one(t, out, !queue).await?;
    }
    Ok(())
}

/// One primary kill: the queue's slot's, or the result list's when `list`.
async fn kill_one(t: &mut Targets, out: &mut Outcome, list: bool) -> Result<(), String> {
    let before = results::list_len(&mut t.raw).await.ok();
    let key = if list {
        t.store.keys().list(RESULTS)
    } else {
        t.store.keys().queue(QUEUE).pending
    };
    let (killed, slot) = tokio::task::block_in_place(|| match &mut t.deployment {
        Deployment::Cluster(c) => {
            let slot = c.key_slot(&key)?;
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
    let role = if list { "result list's" } else { "queue's" };
    let holds = slot.map_or("the only primary".to_owned(), |s| {
        format!("the {role} slot {s}")
    });
    println!(
        "{} primary on port {killed} SIGKILLed ({holds}); waiting for its replica's promotion",
        stamp(t.start)
    );
    let served_after = served_again(t, at, list).await;
    let promoted = tokio::task::block_in_place(|| match &t.deployment {
        Deployment::Cluster(c) => c.wait_promoted(slot.unwrap_or_default(), killed),
        Deployment::Sentinel(g) => g.wait_failover(killed),
        Deployment::Standalone(_) => Err(std::io::Error::other("no failover in standalone")),
    })
    .map_err(|e| format!("waiting for the promotion: {e}"))?;
    println!(
        "{} replica on port {promoted} promoted; the store served the killed slot again {} after the kill",
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
    let back = format!(
        "the killed node is back on port {killed} as a synced replica ({rejoined_after:.2?} after the kill)"
    );
    after_outage(t, out, &back, before).await;
    out.failovers.push(Failover {
        killed,
        slot,
        list_slot: list,
        served_after,
        promoted,
        rejoined_after,
    });
    Ok(())
}

/// Polls a read of the killed slot (the queue's, or the result list's
/// when `list`) until it succeeds (bounded); the time since `at`, or
/// `None` when the bound ran out.
async fn served_again(t: &Targets, at: Instant, list: bool) -> Option<Duration> {
    while at.elapsed() < SERVE_BOUND {
        let read = async {
            if list {
                t.store.list_len(RESULTS).await.map(drop)
            } else {
                t.store.depths(QUEUE).await.map(drop)
            }
        };
        let call = tokio::time::timeout(Duration::from_secs(2), read).await;
        if matches!(call, Ok(Ok(()))) {
            return Some(at.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}
