//! The dispatch-gate contract every gate type implements: a budget in [0, 1], a verdict per request, and releases that undo a reservation exactly once.
//!
//! A gate answers two questions. [`DispatchGate::budget`] is the free
//! fraction of what it guards (1 fully open, 0 closed); it always answers,
//! falling back where its source is unavailable. [`DispatchGate::apply`]
//! decides one request: [`Verdict::Continue`] (dispatch it),
//! [`Verdict::Drop`] (answer it now, terminally), [`Verdict::Refuse`] (not
//! now: a queue gate leaves it pending and unclaimed, a pool gate requeues
//! it through the retry path) or [`Verdict::Wait`] (a pool gate parks it in
//! memory, its claim still renewed, and asks again).
//!
//! A gate that reserves something (a quota slot, a concurrency permit)
//! pushes a release onto the [`Releases`] it is given; the caller runs the
//! list once the reservation is over (the request's record was written, it
//! was parked or refused, its lease was lost, the processor stopped). A
//! release runs exactly once: [`Releases::run`] consumes the list, and a
//! list dropped without being run runs itself on the current Tokio runtime,
//! so no path can leak a reservation.
//!
//! Who owns a gate ([`GateOwner`]) is set by the caller when it builds the
//! gate, never by the gate's configuration: a queue gate names its queue, a
//! pool gate its pool (queue fields empty), and wrapping gates pass their
//! owner to the gates they wrap.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

pub use super::outcome::{GatewayAnswer, GatewayOutcome, OutcomeKind};

/// A boxed future a release runs to completion.
pub type ReleaseFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// One reservation's undo: called once, its future run to completion.
pub type Release = Box<dyn FnOnce() -> ReleaseFuture + Send + 'static>;

/// What a gate decided for one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Dispatch it.
    Continue,
    /// Answer it now, terminally: with this record's payload, or, when
    /// `None`, the `GATE_DROPPED` record.
    Drop(Option<GateRecord>),
    /// Not now. A queue gate leaves the member pending, unclaimed, with no
    /// write; a pool gate requeues the claimed request (retry path, no
    /// backoff, `retry_count` unchanged).
    Refuse,
    /// Ask again shortly (pool gates; the claim stays renewed). A queue
    /// gate's `Wait` leaves the member pending like `Refuse` (Go's
    /// dispatches it like `Continue`; see docs/OPERATIONS.md).
    Wait,
}

/// The record a [`Verdict::Drop`] asks for: the request's id and token are
/// the runtime's; the payload is the gate's, verbatim JSON text (the
/// tier-priority-admission 429 is `{"error": "Too Many Requests", "code": 429}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateRecord {
    /// The record's `payload`, JSON text written as is.
    pub payload: String,
}

/// Who a gate belongs to: the labels of its metric series.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct GateOwner {
    /// The queue spec's id; empty for a pool gate.
    pub queue_id: String,
    /// The queue's pending sorted set; empty for a pool gate.
    pub queue_name: String,
    /// The worker pool (`default` when none is named).
    pub pool_name: String,
}

impl GateOwner {
    /// A queue gate's owner.
    pub fn queue(queue_id: &str, queue_name: &str, pool_name: &str) -> Self {
        GateOwner {
            queue_id: queue_id.to_owned(),
            queue_name: queue_name.to_owned(),
            pool_name: pool_name.to_owned(),
        }
    }

    /// A pool gate's owner: no queue.
    pub fn pool(pool_name: &str) -> Self {
        GateOwner {
            pool_name: pool_name.to_owned(),
            ..GateOwner::default()
        }
    }
}

/// The request a gate decides, as much of it as a gate may read or change.
#[derive(Debug)]
pub struct GateRequest<'a> {
    /// `data.id`.
    pub id: &'a str,
    /// `data.metadata` (the quota gates read their attribute here; fairness
    /// reads `userid`).
    pub metadata: &'a BTreeMap<String, String>,
    /// `internal.labels`, merged with the queue's static labels. A gate may
    /// set labels (`classification`: `reserved` or `overflow`) that later
    /// gates, the merge policy and the queue gate's counters read.
    pub labels: &'a mut BTreeMap<String, String>,
}

/// What the gates of one request reserved, undone in reverse order once.
#[derive(Default)]
pub struct Releases {
    list: Vec<Release>,
}

impl Releases {
    pub fn new() -> Self {
        Releases::default()
    }

    /// Adds a release; the list runs in reverse, the last pushed first.
    pub fn push(&mut self, release: Release) {
        self.list.push(release);
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The releases pushed after the first `len`, taken out (a chain undoes
    /// only what its own gates reserved).
    pub fn split_off(&mut self, len: usize) -> Releases {
        Releases {
            list: self.list.split_off(len.min(self.list.len())),
        }
    }

    /// Moves every release of `other` to the end of this list.
    pub fn append(&mut self, mut other: Releases) {
        self.list.append(&mut other.list);
    }

    /// Runs every release, last pushed first, each once.
    pub async fn run(mut self) {
        run_in_reverse(std::mem::take(&mut self.list)).await;
    }
}

impl Drop for Releases {
    /// A list nobody ran still runs: on the current Tokio runtime when there
    /// is one, else on a thread of its own, so a reservation is never
    /// leaked by a path that forgot it.
    fn drop(&mut self) {
        if self.list.is_empty() {
            return;
        }
        // The spawned future owns the bare list, not a `Releases`: a runtime
        // that is shutting down drops it unpolled, and a `Releases` in it
        // would spawn again from its own drop, without end.
        let rest = std::mem::take(&mut self.list);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(run_in_reverse(rest));
            }
            Err(_) => {
                std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build();
                    if let Ok(runtime) = runtime {
                        runtime.block_on(run_in_reverse(rest));
                    }
                });
            }
        }
    }
}

/// Runs each release, last pushed first.
async fn run_in_reverse(list: Vec<Release>) {
    for release in list.into_iter().rev() {
        release().await;
    }
}

impl fmt::Debug for Releases {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Releases")
            .field("len", &self.list.len())
            .finish()
    }
}

/// Why a gate could not decide. A queue gate's error leaves the member
/// pending (`gate_decisions_total{decision="error"}`); a pool gate's ends
/// the request `GATE_ERROR` with `Pool gating error: <this>`.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// The gate's own account of what failed.
    #[error("{0}")]
    Failed(String),
    /// A call the gate made failed (Redis, Prometheus, a scrape).
    #[error("{context}: {source}")]
    Source {
        context: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The request's context ended while a blocking gate waited for it.
    #[error("context canceled: {0}")]
    Cancelled(String),
}

/// A gate that cannot be built from its configuration: the message names
/// the gate and what is wrong, and the startup error wraps it with the
/// queue or pool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GateConfigError(pub String);

/// `gate_params`: a JSON object whose values usually arrive as strings.
pub type GateParams = serde_json::Map<String, serde_json::Value>;

/// What building a gate may need besides its own params: the process-wide
/// settings of the metric sources and the shared Redis connections.
#[derive(Debug, Clone, Default)]
pub struct GateEnv {
    /// `--prometheus-url`; the Prometheus gates refuse to start without it.
    pub prometheus_url: Option<String>,
    /// `--prometheus-cache-ttl` (Go default 5 s; zero turns caching off).
    pub prometheus_cache_ttl: Duration,
    /// The connections of the `redis` and `redis-quota` gates, one per
    /// `address`, shared by every gate built from this env (and its clones).
    #[cfg(feature = "redis")]
    pub redis: super::redis_clients::RedisClients,
}

/// One gate. See the module docs for the contract.
#[async_trait::async_trait]
pub trait DispatchGate: Send + Sync + fmt::Debug + 'static {
    /// The free fraction, in [0, 1] (a source's `NaN` may pass through, as
    /// in Go; callers treat a budget that is not above 0 as closed).
    async fn budget(&self) -> f64;

    /// Decides one request. Reservations it makes are pushed onto
    /// `releases`; on an error or a verdict other than `Continue` the gate
    /// leaves nothing of its own reserved. The default is a gate that only
    /// has a budget (`constant`, `redis`, the metric gates): refuse when
    /// the budget is not above 0, else continue ([`budget_only`]).
    async fn apply(
        &self,
        _request: &mut GateRequest<'_>,
        _releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        Ok(budget_only(self).await)
    }

    /// Learns from one gateway call of a request this gate let through,
    /// `labels` as the gates left them. Most gates learn nothing; the
    /// wrapping gates pass it to the gates they wrap.
    fn observe(&self, labels: &BTreeMap<String, String>, outcome: &GatewayOutcome) {
        let _ = (labels, outcome);
    }

    /// Resolves when a request this gate told to `Wait` may pass now (a
    /// slot freed, a window grew). A hint shared by every waiter, possibly
    /// spurious; a gate without one never resolves, and the waiter's own
    /// pause bounds the wait either way.
    async fn woken(&self) {
        std::future::pending::<()>().await;
    }
}

/// A shared gate is a gate (one instance may guard several queues).
#[async_trait::async_trait]
impl<G: DispatchGate + ?Sized> DispatchGate for std::sync::Arc<G> {
    async fn budget(&self) -> f64 {
        (**self).budget().await
    }

    async fn apply(
        &self,
        request: &mut GateRequest<'_>,
        releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        (**self).apply(request, releases).await
    }

    fn observe(&self, labels: &BTreeMap<String, String>, outcome: &GatewayOutcome) {
        (**self).observe(labels, outcome);
    }

    async fn woken(&self) {
        (**self).woken().await;
    }
}

/// The `apply` of a gate that only has a budget (`redis`, the metric
/// gates): refuse when the budget is not above 0, else continue. A `NaN`
/// budget continues, as Go's comparison does.
pub async fn budget_only<G: DispatchGate + ?Sized>(gate: &G) -> Verdict {
    let budget = gate.budget().await;
    if budget <= 0.0 {
        Verdict::Refuse
    } else {
        Verdict::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn noting(log: &Arc<Mutex<Vec<u32>>>, n: u32) -> Release {
        let log = log.clone();
        Box::new(move || {
            Box::pin(async move {
                log.lock().unwrap().push(n);
            })
        })
    }

    /// A log, and a list whose releases note `ns` in it, pushed in order.
    fn noting_all(ns: &[u32]) -> (Arc<Mutex<Vec<u32>>>, Releases) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut releases = Releases::new();
        for &n in ns {
            releases.push(noting(&log, n));
        }
        (log, releases)
    }

    #[tokio::test]
    async fn releases_run_last_pushed_first_and_once() {
        let (log, releases) = noting_all(&[1, 2, 3]);
        releases.run().await;
        assert_eq!(*log.lock().unwrap(), vec![3, 2, 1]);
    }

    #[tokio::test]
    async fn a_chain_takes_out_only_the_releases_it_pushed() {
        let (log, mut releases) = noting_all(&[1]);
        let before = releases.len();
        releases.push(noting(&log, 2));
        releases.push(noting(&log, 3));
        releases.split_off(before).run().await;
        assert_eq!(*log.lock().unwrap(), vec![3, 2]);
        releases.run().await;
        assert_eq!(*log.lock().unwrap(), vec![3, 2, 1]);
    }

    #[tokio::test]
    async fn a_list_dropped_without_running_still_runs_each_release() {
        let (log, releases) = noting_all(&[1, 2]);
        drop(releases);
        for _ in 0..100 {
            if log.lock().unwrap().len() == 2 {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(*log.lock().unwrap(), vec![2, 1]);
    }

    #[test]
    fn a_list_dropped_as_its_runtime_shuts_down_is_let_go_without_spawning_again() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (log, releases) = noting_all(&[1]);
        runtime.block_on(async move { drop(releases) });
        drop(runtime);
        assert!(log.lock().unwrap().is_empty(), "never polled, never run");
    }
}
