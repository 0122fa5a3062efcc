//! The result writer: batches terminal records into ack calls and retries into park calls.
//!
//! Acks are idempotent (the first terminal record wins and later ones are
//! suppressed), so an ack whose outcome is unknown is simply sent again. A
//! result is never dropped while its claim is held: the writer keeps trying
//! until the store answers or the process stops, in which case the claim
//! lapses and the request is redelivered, so nothing is lost either way.
//!
//! Every ack call has a fixed cost in Redis (a script run and a round trip,
//! about as much as 9 items, see docs/PERFORMANCE.md), so the writer lets
//! the deliveries of one claimed batch, which finish together, gather into
//! one call: after the first delivery it yields to the workers until no
//! more arrive, never waiting on a timer.

use super::Shared;
use crate::metrics;
use claim_core::store::{AckItem, ParkItem};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Something the writer must deliver for a held claim.
#[derive(Debug)]
pub enum Delivery {
    Ack {
        queue: Arc<str>,
        item: AckItem,
        /// The record's error code, or "OK": labels the results metric.
        code: &'static str,
    },
    Park {
        queue: Arc<str>,
        item: ParkItem,
    },
}

impl Delivery {
    /// The held claim this delivery settles.
    pub fn claim(&self) -> (&Arc<str>, &claim_core::Generation) {
        match self {
            Delivery::Ack { queue, item, .. } => (queue, &item.generation),
            Delivery::Park { queue, item } => (queue, &item.generation),
        }
    }
}

const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Yields to the workers at most this often while deliveries keep arriving.
const GATHER_YIELDS: usize = 8;

/// Runs until `stop` fires and everything sent before it is delivered.
pub async fn run(shared: Arc<Shared>, mut rx: mpsc::Receiver<Delivery>, stop: CancellationToken) {
    let max = shared.config.ack_batch_size;
    let mut batch = Vec::with_capacity(max);
    let mut closed = false;
    loop {
        let received = tokio::select! {
            biased;
            n = rx.recv_many(&mut batch, max) => n,
            () = stop.cancelled(), if !closed => {
                // No new deliveries; what is queued is still delivered.
                rx.close();
                closed = true;
                continue;
            }
        };
        if received == 0 {
            return;
        }
        gather(&mut rx, &mut batch, max).await;
        let mut acks: BTreeMap<Arc<str>, (Vec<AckItem>, Vec<&'static str>)> = BTreeMap::new();
        let mut parks: BTreeMap<Arc<str>, Vec<ParkItem>> = BTreeMap::new();
        for delivery in batch.drain(..) {
            match delivery {
                Delivery::Ack { queue, item, code } => {
                    let entry = acks.entry(queue).or_default();
                    entry.0.push(item);
                    entry.1.push(code);
                }
                Delivery::Park { queue, item } => parks.entry(queue).or_default().push(item),
            }
        }
        for (queue, (items, codes)) in acks {
            deliver_acks(&shared, &queue, &items, &codes).await;
        }
        for (queue, items) in parks {
            deliver_parks(&shared, &queue, &items).await;
        }
    }
}

/// Takes deliveries that arrive while the workers of the same batch finish.
async fn gather(rx: &mut mpsc::Receiver<Delivery>, batch: &mut Vec<Delivery>, max: usize) {
    for _ in 0..GATHER_YIELDS {
        if batch.len() >= max {
            return;
        }
        tokio::task::yield_now().await;
        let before = batch.len();
        while batch.len() < max {
            match rx.try_recv() {
                Ok(delivery) => batch.push(delivery),
                Err(_) => break,
            }
        }
        if batch.len() == before {
            return;
        }
    }
}

async fn deliver_acks(
    shared: &Shared,
    queue: &Arc<str>,
    items: &[AckItem],
    codes: &[&'static str],
) {
    let Some(outcomes) =
        retry_until_answered("ack", || shared.store.ack(queue, &shared.owner, items)).await
    else {
        forget(shared, queue, items.iter().map(|i| &i.generation));
        return;
    };
    let mut suppressed = 0;
    for ((item, outcome), code) in items.iter().zip(&outcomes).zip(codes) {
        shared.held.remove(queue, &item.generation);
        if outcome.pushed {
            metrics::result(queue, code);
            shared.stats.records_pushed.fetch_add(1, Ordering::Relaxed);
        } else {
            suppressed += 1;
        }
    }
    if suppressed > 0 {
        metrics::duplicates_suppressed(queue, suppressed);
        shared
            .stats
            .duplicates_suppressed
            .fetch_add(suppressed, Ordering::Relaxed);
    }
}

async fn deliver_parks(shared: &Shared, queue: &Arc<str>, items: &[ParkItem]) {
    let outcomes = retry_until_answered("park_retry", || {
        shared.store.park_retry(queue, &shared.owner, items)
    })
    .await;
    forget(shared, queue, items.iter().map(|i| &i.generation));
    let parked = outcomes.unwrap_or_default().iter().filter(|p| **p).count();
    metrics::retries(queue, parked);
    shared.stats.retries.fetch_add(parked, Ordering::Relaxed);
}

/// Stops holding claims whose delivery is done or impossible. A claim the
/// store refused to settle lapses and is redelivered: nothing is lost.
fn forget<'a>(
    shared: &Shared,
    queue: &Arc<str>,
    generations: impl Iterator<Item = &'a claim_core::Generation>,
) {
    for generation in generations {
        shared.held.remove(queue, generation);
    }
}

/// Calls `op` until the store answers; `None` when it refuses the input. Both kinds of failure are retried:
/// a failed call did nothing, and an indeterminate one is harmless to repeat
/// because every writer operation is idempotent or owner-checked.
async fn retry_until_answered<T, F, Fut>(what: &str, op: F) -> Option<T>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, claim_core::StoreError>>,
{
    let mut backoff = Duration::from_millis(50);
    loop {
        match op().await {
            Ok(answer) => return Some(answer),
            Err(e @ claim_core::StoreError::InvalidInput { .. }) => {
                tracing::error!(error = %e, "{what} refused; its claims will lapse and be redelivered");
                return None;
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?backoff, "{what} failed; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}
