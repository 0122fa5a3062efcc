//! Kill → redelivery: how long the claims a SIGKILLed worker held take to be claimed again or answered.
//!
//! Right after the kill (the process is reaped, so it can write nothing
//! more) the queue's claims are read; those held under the dead worker's
//! owner token are orphans. Each is then polled until another owner claims
//! it, it is parked for retry by another owner, or it has its terminal
//! record. The time from the signal to that moment is one sample. The
//! orphan's lease must expire and a reclaimer run (every reclaim interval,
//! on any worker) before anyone can claim it again, so samples sit near
//! lease + reclaim interval at most; polling adds up to [`POLL`].

use crate::QUEUE;
use crate::producer::until_ok;
use claim_core::{ClaimInspect, Generation};
use claim_redis::RedisStore;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// How often the claims are read while orphans remain.
pub const POLL: Duration = Duration::from_millis(50);

/// What happened to one kill's orphans.
#[derive(Debug, Clone, Default)]
pub struct KillTrace {
    /// Claims the worker held when it died.
    pub orphans: usize,
    /// Time from the kill to each orphan's redelivery (or record).
    pub times: Vec<Duration>,
    /// Orphans not redelivered within the tracking bound.
    pub unresolved: usize,
}

/// Tracks the orphans of `owner`, killed at `at`, for at most `bound`.
pub async fn track(store: RedisStore, owner: String, at: Instant, bound: Duration) -> KillTrace {
    let Ok((claims, _)) = until_ok("claims", || store.claims(QUEUE)).await else {
        return KillTrace::default();
    };
    let mut open: Vec<Generation> = claims
        .into_iter()
        .filter(|c| c.owner.as_str() == owner)
        .map(|c| c.generation)
        .collect();
    let mut trace = KillTrace {
        orphans: open.len(),
        ..KillTrace::default()
    };
    while !open.is_empty() && at.elapsed() < bound {
        tokio::time::sleep(POLL).await;
        let (Ok(claims), Ok(retrying)) = (store.claims(QUEUE).await, store.retry_entries().await)
        else {
            continue;
        };
        let holders: HashMap<Generation, String> = claims
            .into_iter()
            .map(|c| (c.generation, c.owner.0))
            .collect();
        let parked: HashSet<Generation> = retrying
            .iter()
            .filter_map(|e| claim_core::wire::parse_member(e.member.as_bytes()).ok())
            .map(|p| Generation::new(p.id, p.token))
            .collect();
        let now = at.elapsed();
        let mut still = Vec::with_capacity(open.len());
        for generation in open {
            let done = match holders.get(&generation) {
                Some(holder) => *holder != owner,
                None => {
                    parked.contains(&generation)
                        || store.is_terminal(&generation).await.unwrap_or(false)
                }
            };
            if done {
                trace.times.push(now);
            } else {
                still.push(generation);
            }
        }
        open = still;
    }
    trace.unresolved = open.len();
    trace
}

/// The `p`-quantile (0..=1) of `samples`, nearest rank.
pub fn quantile(samples: &[Duration], p: f64) -> Option<Duration> {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let rank = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied()
}
