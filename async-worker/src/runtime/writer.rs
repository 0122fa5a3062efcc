//! The result writer: batches terminal records into ack calls and retries into park calls, isolating what the store refuses.
//!
//! Acks are idempotent (the first terminal record wins and later ones are
//! suppressed), so an ack whose outcome is unknown is simply sent again.
//!
//! Nothing here waits behind a failing call. Fresh settlements form one lane
//! per queue and kind (ack or park) with at most one call in flight, so
//! while a call runs the next batch gathers; a call that fails leaves its
//! lane at once and becomes a retry group of its own, resent after a capped
//! exponential backoff while the lane goes on. How a group is retried
//! depends on the error (see [`next_step`]):
//! - transient (connection loss, timeout, OOM): resent whole; after
//!   [`SPLIT_AFTER`] failures in a row it is split in halves anyway, so an
//!   item the store misreports as transient cannot hold its batch-mates;
//! - permanent (`Rejected`, `InvalidInput`): split in halves at once, down
//!   to single items; an item refused on its own is given up on: its claim
//!   is forgotten locally, so it lapses and is redelivered, and the delivery
//!   limit ends it in the dead set. Nothing is lost.
//! - a single item that keeps failing "transiently" for over a lease while
//!   other acks or parks of its queue land is given up on the same way: the
//!   store serves that queue, so the error is about this item, whatever its
//!   class says. Out of memory is exempt: it is about the store.
//!
//! No retry loop is unbounded: shutdown hard-stops the writer at its bound,
//! and what it still holds stays claimed (the sweep returns it).
//!
//! Every ack call has a fixed cost in Redis (a script run and a round trip,
//! about as much as 9 items, see docs/PERFORMANCE.md), so after the first
//! settlement the writer yields to the workers until no more arrive, never
//! waiting on a timer, and lets the settlements of one claimed batch gather
//! into one call.

use super::Shared;
use super::outcomes::{StoreReply, account};
use super::retry::{Step, next_step};
use super::settlement::{Group, Kind, Lane, Owed, Settlement};
use claim_core::StoreError;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Yields to the workers at most this often while settlements keep arriving.
const GATHER_YIELDS: usize = 8;

/// The writer's state between events.
struct Writer {
    shared: Arc<Shared>,
    max: usize,
    fresh: BTreeMap<Lane, Vec<Owed>>,
    busy: BTreeSet<Lane>,
    /// Retry groups and when each is due.
    waiting: Vec<(Instant, Group)>,
    /// Oldest first failure of each in-flight retry group, by call number.
    in_flight_failing: BTreeMap<u64, Instant>,
    calls: u64,
    /// When a call for each queue last landed: the store serves that queue.
    landed: BTreeMap<Arc<str>, Instant>,
    lease: Duration,
}

type CallResult = (u64, Group, Result<StoreReply, StoreError>);

/// Runs until `stop` fires and everything sent before it is written (the
/// caller bounds that wait by dropping this future).
pub async fn run(shared: Arc<Shared>, mut rx: mpsc::Receiver<Settlement>, stop: CancellationToken) {
    let max = shared.config.ack_batch_size;
    let mut w = Writer {
        shared: shared.clone(),
        max,
        fresh: BTreeMap::new(),
        busy: BTreeSet::new(),
        waiting: Vec::new(),
        in_flight_failing: BTreeMap::new(),
        calls: 0,
        landed: BTreeMap::new(),
        lease: Duration::from_millis(shared.store.config().lease_ttl_ms),
    };
    let mut calls = FuturesUnordered::new();
    let mut received = Vec::with_capacity(max);
    // `stopping`: shutdown closed the channel to new sends; what is already
    // queued in it is still received and written. `drained`: the channel
    // is closed and empty, so nothing more can arrive.
    let mut stopping = false;
    let mut drained = false;
    // Back-pressure: stop taking settlements while this many are owed.
    let owed_bound = max.max(w.shared.config.total_workers()) * 4;
    loop {
        let next_due = w.waiting.iter().map(|(due, _)| *due).min();
        let room = !drained && w.owed() < owed_bound;
        tokio::select! {
            biased;
            () = stop.cancelled(), if !stopping => {
                rx.close();
                stopping = true;
            }
            Some((call, group, answer)) = calls.next() => w.answered(call, group, answer),
            n = rx.recv_many(&mut received, max), if room => {
                if n == 0 {
                    drained = true;
                } else {
                    gather(&mut rx, &mut received, max).await;
                    for settlement in received.drain(..) {
                        w.fresh.entry(settlement.lane()).or_default().push(Owed {
                            settlement,
                            uncertain: false,
                            failing_since: None,
                        });
                    }
                }
            }
            () = sleep_until(next_due), if next_due.is_some() => {}
            else => {
                // Unreachable while the bookkeeping holds (something owed is
                // in flight, waiting or launched below); if it ever does not,
                // ending beats spinning: what is owed stays claimed and is
                // swept or redelivered, never lost.
                tracing::error!(owed = w.owed(), "result writer has nothing to wait on; stopping");
                return;
            }
        }
        for group in w.launchable() {
            calls.push(w.call(group));
        }
        w.report_stuck();
        if drained && calls.is_empty() && w.owed() == 0 {
            return;
        }
    }
}

/// A disabled branch's future is still built: this one touches no timer
/// until a retry is due.
async fn sleep_until(due: Option<Instant>) {
    if let Some(due) = due {
        tokio::time::sleep_until(due).await;
    }
}

impl Writer {
    fn owed(&self) -> usize {
        self.fresh.values().map(Vec::len).sum::<usize>()
            + self
                .waiting
                .iter()
                .map(|(_, g)| g.items.len())
                .sum::<usize>()
    }

    /// Due retry groups, and a batch from every idle lane.
    fn launchable(&mut self) -> Vec<Group> {
        let now = Instant::now();
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(at, _)| *at <= now);
        self.waiting = later;
        let mut out: Vec<Group> = due.into_iter().map(|(_, g)| g).collect();
        for (lane, items) in &mut self.fresh {
            if items.is_empty() || self.busy.contains(lane) {
                continue;
            }
            let rest = items.split_off(self.max.min(items.len()));
            let batch = std::mem::replace(items, rest);
            self.busy.insert(lane.clone());
            out.push(Group {
                lane: lane.clone(),
                items: batch,
                attempts: 0,
                fresh: true,
            });
        }
        self.fresh.retain(|_, items| !items.is_empty());
        out
    }

    fn call(&mut self, group: Group) -> impl Future<Output = CallResult> + use<> {
        self.calls += 1;
        let call = self.calls;
        if let Some(since) = group.items.iter().filter_map(|o| o.failing_since).min() {
            self.in_flight_failing.insert(call, since);
        }
        let shared = self.shared.clone();
        async move {
            let (queue, store, owner) = (&group.lane.0, &shared.store, &shared.owner);
            let answer = match group.lane.1 {
                Kind::Ack => {
                    let items = group.items_of(Settlement::ack_item);
                    store
                        .ack(owner.on(queue), &items)
                        .await
                        .map(StoreReply::Acks)
                }
                Kind::Park => {
                    let parks = group.items_of(Settlement::park_item);
                    let parked = store.park_retry(owner.on(queue), &parks).await;
                    parked.map(StoreReply::Parks)
                }
            };
            (call, group, answer)
        }
    }

    fn answered(&mut self, call: u64, mut group: Group, answer: Result<StoreReply, StoreError>) {
        self.in_flight_failing.remove(&call);
        if group.fresh {
            self.busy.remove(&group.lane);
            group.fresh = false;
        }
        let error = match answer {
            Ok(answer) => {
                self.landed.insert(group.lane.0.clone(), Instant::now());
                return account(&self.shared, &group, answer);
            }
            Err(error) => error,
        };
        self.shared.signals.note_store_error(&error);
        let now = Instant::now();
        for owed in &mut group.items {
            owed.uncertain |= error.may_have_happened();
            owed.failing_since.get_or_insert(now);
        }
        group.attempts += 1;
        let what = match group.lane.1 {
            Kind::Ack => "ack",
            Kind::Park => "park_retry",
        };
        let queue = group.lane.0.clone();
        let failing_since = group.items[0].failing_since.unwrap_or(now);
        let singled_out = group.items.len() == 1
            && now.duration_since(failing_since) > self.lease
            && !error.is_out_of_memory()
            && self
                .landed
                .get(&group.lane.0)
                .is_some_and(|t| *t > failing_since);
        let step = if singled_out {
            Step::GiveUp
        } else {
            next_step(&error, group.items.len(), group.attempts)
        };
        match step {
            Step::Retry(wait) => {
                tracing::warn!(%queue, items = group.items.len(), %error, retry_in = ?wait, "{what} failed; retrying");
                self.waiting.push((now + wait, group));
            }
            Step::Split(wait) => {
                tracing::warn!(%queue, items = group.items.len(), %error, retry_in = ?wait, "{what} failed; resending the batch in halves to isolate the cause");
                let half = group.items.split_off(group.items.len() / 2);
                // Halves start their backoff afresh: isolating one bad item
                // in a batch of n takes log2(n) rounds, not minutes.
                group.attempts = 0;
                let other = Group {
                    lane: group.lane.clone(),
                    items: half,
                    attempts: 0,
                    fresh: false,
                };
                self.waiting.push((now + wait, group));
                self.waiting.push((now + wait, other));
            }
            Step::GiveUp => {
                for owed in group.items {
                    let (queue, generation) = owed.settlement.claim();
                    tracing::error!(%queue, request = %generation, %error, "{what} refused for this request alone; giving up: its claim lapses and it is redelivered (the delivery limit ends it in the dead set)");
                    crate::metrics::given_up(queue, what);
                    self.shared.held.remove(queue, generation);
                    self.shared
                        .stats
                        .given_up
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
    }

    /// Publishes since when the oldest settlement still owed has been failing.
    fn report_stuck(&self) {
        let oldest = self
            .waiting
            .iter()
            .flat_map(|(_, g)| g.items.iter().filter_map(|o| o.failing_since))
            .chain(self.in_flight_failing.values().copied())
            .min();
        self.shared.signals.set_writer_failing_since(oldest);
    }
}

/// Takes settlements that arrive while the workers of the same batch finish.
async fn gather(rx: &mut mpsc::Receiver<Settlement>, batch: &mut Vec<Settlement>, max: usize) {
    for _ in 0..GATHER_YIELDS {
        if batch.len() >= max {
            return;
        }
        tokio::task::yield_now().await;
        let before = batch.len();
        while batch.len() < max {
            match rx.try_recv() {
                Ok(settlement) => batch.push(settlement),
                Err(_) => break,
            }
        }
        if batch.len() == before {
            return;
        }
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
