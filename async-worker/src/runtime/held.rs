//! The claims this runtime holds: one entry per claimed generation until its ack or return lands.

use crate::gate::Releases;
use claim_core::{Generation, Millis};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tokio_util::sync::CancellationToken;

/// Why the runtime stopped wanting a request's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// Renewal found the claim gone or held by another owner.
    LeaseLost,
    /// The producer cancelled the request.
    Cancelled,
    /// Shutdown ran out of drain time.
    Shutdown,
}

/// One in-flight request's stop signal and its reason.
#[derive(Debug, Default)]
pub struct Flight {
    pub cancel: CancellationToken,
    reason: OnceLock<StopReason>,
    /// Its outcome is with the writer: the claim is about to leave the
    /// store by this runtime's own ack or park.
    handed_over: std::sync::atomic::AtomicBool,
    /// The request's `data.created` (Unix seconds), when it had one: the
    /// message latency is measured from it when the record lands.
    created: Option<i64>,
    /// What its queue gate reserved: released when the claim is forgotten.
    gate_releases: Mutex<Releases>,
}

impl Flight {
    /// Stops the work; the first reason given sticks.
    pub fn stop(&self, reason: StopReason) {
        let _ = self.reason.set(reason);
        self.cancel.cancel();
    }

    pub fn reason(&self) -> Option<StopReason> {
        self.reason.get().copied()
    }

    /// Marks its outcome as handed to the writer: a renewal that finds the
    /// claim gone from now on is this runtime's own ack, not a lost lease.
    pub fn mark_handed_over(&self) {
        self.handed_over
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn is_handed_over(&self) -> bool {
        self.handed_over.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The request's `data.created`, when it had one.
    pub fn created(&self) -> Option<i64> {
        self.created
    }

    /// Keeps what the queue gate reserved until the claim is forgotten.
    pub fn hold_releases(&self, releases: Releases) {
        self.lock_releases().append(releases);
    }

    /// Releases what the queue gate reserved (each release runs once, on
    /// its own task: see [`Releases`]' drop).
    fn release_gates(&self) {
        drop(std::mem::take(&mut *self.lock_releases()));
    }

    fn lock_releases(&self) -> std::sync::MutexGuard<'_, Releases> {
        self.gate_releases.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Held claims of one queue, by generation.
type QueueClaims = HashMap<Generation, HeldClaim>;

/// Claims held, by queue and generation. Nested by queue, so a lookup
/// borrows the caller's queue and generation instead of building an owned
/// key (two strings cloned per acked request).
#[derive(Debug, Default, Clone)]
pub struct Held {
    inner: Arc<Mutex<HashMap<Arc<str>, QueueClaims>>>,
}

#[derive(Debug, Clone)]
struct HeldClaim {
    flight: Arc<Flight>,
    lease_expiry: Millis,
}

impl Held {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, QueueClaims>> {
        // Entries are inserted and removed whole; a panic elsewhere cannot
        // leave one half-written, so a poisoned map is still consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the held claim of `generation` in `queue`, if there is one.
    fn with_claim<T>(
        &self,
        queue: &str,
        generation: &Generation,
        f: impl FnOnce(&mut HeldClaim) -> T,
    ) -> Option<T> {
        self.lock()
            .get_mut(queue)
            .and_then(|claims| claims.get_mut(generation))
            .map(f)
    }

    /// Holds a claim of a request created at `created` (`data.created`,
    /// Unix seconds; `None` or 0 when unset).
    pub fn insert(
        &self,
        queue: &Arc<str>,
        generation: Generation,
        lease_expiry: Millis,
        created: Option<i64>,
    ) -> Arc<Flight> {
        let flight = Arc::new(Flight {
            created: created.filter(|c| *c != 0),
            ..Flight::default()
        });
        let claim = HeldClaim {
            flight: flight.clone(),
            lease_expiry,
        };
        let mut held = self.lock();
        match held.get_mut(&**queue) {
            Some(claims) => claims.insert(generation, claim),
            None => held
                .entry(queue.clone())
                .or_default()
                .insert(generation, claim),
        };
        flight
    }

    /// Forgets a claim (acked, returned, or lost). Returns its flight.
    pub fn remove(&self, queue: &Arc<str>, generation: &Generation) -> Option<Arc<Flight>> {
        let removed = self
            .lock()
            .get_mut(&**queue)
            .and_then(|claims| claims.remove(generation))
            .map(|c| c.flight);
        if let Some(flight) = &removed {
            flight.release_gates();
        }
        removed
    }

    pub fn set_lease(&self, queue: &Arc<str>, generation: &Generation, lease_expiry: Millis) {
        self.with_claim(queue, generation, |c| c.lease_expiry = lease_expiry);
    }

    /// The lease expiry last confirmed by the store for a held claim.
    pub fn lease_expiry(&self, queue: &Arc<str>, generation: &Generation) -> Option<Millis> {
        self.with_claim(queue, generation, |c| c.lease_expiry)
    }

    pub fn flight(&self, queue: &Arc<str>, generation: &Generation) -> Option<Arc<Flight>> {
        self.with_claim(queue, generation, |c| c.flight.clone())
    }

    /// Every held generation, grouped by queue (queues holding none left out).
    pub fn by_queue(&self) -> HashMap<Arc<str>, Vec<Generation>> {
        self.lock()
            .iter()
            .filter(|(_, claims)| !claims.is_empty())
            .map(|(queue, claims)| (queue.clone(), claims.keys().cloned().collect()))
            .collect()
    }

    /// Stops every held request's work.
    pub fn stop_all(&self, reason: StopReason) {
        for claim in self.lock().values().flat_map(HashMap::values) {
            claim.flight.stop(reason);
        }
    }

    pub fn len(&self) -> usize {
        self.lock().values().map(HashMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.lock().values().all(HashMap::is_empty)
    }
}
