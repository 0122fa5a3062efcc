//! The connection pool and the one place Redis errors become `StoreError`s, with a timeout on every call.
//!
//! Classification: a call that never reached Redis (no connection, pool
//! exhausted, refused) definitely did not happen: `Failed`. A write whose
//! connection broke or timed out after sending may have run:
//! `Indeterminate`. A read that times out changed nothing: `Failed`. An
//! error Redis answered (scripts validate before their first write, so
//! nothing happened) is classified by its code: a server that is loading,
//! busy, failing over or read-only (`LOADING`, `BUSY`, `TRYAGAIN`,
//! `MASTERDOWN`, `READONLY`, `CLUSTERDOWN`, `NOSCRIPT`, `NOREPLICAS`, and
//! `MOVED`/`ASK` the cluster client did not follow) will take the call
//! later: `Failed`, transient; `OOM` is `OutOfMemory`; every other server
//! or script error (`WRONGTYPE`, `ERR`, a script's own refusal) answers the
//! same call the same way again: `Rejected`, permanent.
//!
//! The pool is deadpool's, with a manager of our own: deadpool-redis checks
//! every checkout with `UNWATCH` + `PING`, a round trip before every call,
//! which doubled the round trips of the hot path. Ours checks a connection
//! only when it was last handed out more than [`IDLE_CHECK`] ago (so after
//! a pause, such as a Redis restart, the first call still gets a live
//! connection), and a connection that fails or times out mid-call is taken
//! out of the pool instead of being handed out again.

use claim_core::Op;
use claim_core::StoreError;
use deadpool::managed::{self, Metrics, PoolError, RecycleResult};
use redis::aio::MultiplexedConnection;
use redis::{ErrorKind, FromRedisValue, RedisError, RedisResult, ServerErrorKind};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;

mod classify;
mod cluster;
mod handle;
mod sentinel;
mod slot_map;
mod trace;

pub(crate) use classify::{bad_reply, classify};
pub(crate) use cluster::ClusterBackend;

pub(crate) use handle::Handle;
pub(crate) use sentinel::SentinelSource;
pub(crate) use slot_map::SlotMap;
pub use trace::CALL_SPAN_TARGET;
pub(crate) use trace::CallNames;

/// A connection handed out again within this long of its last checkout is
/// trusted without a PING; one idle longer is checked first.
pub(crate) const IDLE_CHECK: Duration = Duration::from_millis(5);

/// Where the pool's new connections come from: deadpool-redis's manager,
/// with the checkout PING only after idleness.
pub(crate) enum Source {
    /// The URL's server (standalone).
    Url(deadpool_redis::Manager),
    /// The current primary, asked of the sentinels for every new connection.
    Sentinel(SentinelSource),
}

impl managed::Manager for Source {
    type Type = MultiplexedConnection;
    type Error = RedisError;

    async fn create(&self) -> Result<MultiplexedConnection, RedisError> {
        match self {
            Source::Url(inner) => managed::Manager::create(inner).await,
            Source::Sentinel(sentinel) => sentinel.connect().await,
        }
    }

    async fn recycle(
        &self,
        conn: &mut MultiplexedConnection,
        metrics: &Metrics,
    ) -> RecycleResult<RedisError> {
        if metrics.last_used() < IDLE_CHECK {
            return Ok(());
        }
        match self {
            Source::Url(inner) => managed::Manager::recycle(inner, conn, metrics).await,
            Source::Sentinel(sentinel) => sentinel.check(conn).await,
        }
    }
}

pub(crate) type Pool = managed::Pool<Source>;

/// The pool: `size` connections, every wait bounded by `timeout`, the most
/// recently returned connection handed out first (under load one or two
/// connections stay hot and are never pinged).
pub(crate) fn pool(
    source: Source,
    size: usize,
    timeout: Duration,
) -> Result<Pool, managed::BuildError> {
    managed::Pool::builder(source)
        .max_size(size)
        .wait_timeout(Some(timeout))
        .create_timeout(Some(timeout))
        .recycle_timeout(Some(timeout))
        .queue_mode(managed::QueueMode::Lifo)
        .runtime(deadpool::Runtime::Tokio1)
        .build()
}

/// What a call may have changed, which decides how its errors are classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    Read,
    /// One command or one script: a server error means it did nothing.
    Write,
    /// MULTI/EXEC: a command failing inside EXEC leaves the others applied.
    Transaction,
}

/// What [`Conn::query`] sends: one command or a pipeline.
pub(crate) trait Request: Sync {
    fn send<'a, T: FromRedisValue + 'static>(
        &'a self,
        conn: &'a mut Handle,
    ) -> impl Future<Output = RedisResult<T>> + Send + 'a;

    /// Its span, when calls are traced.
    fn span(&self, names: &CallNames, op: Op) -> tracing::Span;
}

/// Both have an inherent `query_async` of the same shape; one impl body
/// serves both.
macro_rules! request {
    ($($ty:ty => $span:ident),*) => {$(
        impl Request for $ty {
            fn send<'a, T: FromRedisValue + 'static>(
                &'a self,
                conn: &'a mut Handle,
            ) -> impl Future<Output = RedisResult<T>> + Send + 'a {
                self.query_async(conn)
            }

            fn span(&self, names: &CallNames, op: Op) -> tracing::Span {
                names.$span(op, self)
            }
        }
    )*};
}

request!(redis::Cmd => command, redis::Pipeline => pipeline);

/// The connections a store uses: a pool of multiplexed connections to one
/// server (standalone, or the primary Sentinel names), or a cluster client
/// (one multiplexed connection per node; it follows MOVED and ASK and
/// refreshes its slot map itself).
#[derive(Clone)]
pub(crate) enum Backend {
    Pool(Pool),
    Cluster(std::sync::Arc<ClusterBackend>),
}

#[derive(Clone)]
pub(crate) struct Conn {
    backend: Backend,
    timeout: Duration,
    /// Set when every call gets a span (`enable_tracing`); `None` costs
    /// each call one check.
    trace: Option<Arc<CallNames>>,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Conn");
        match &self.backend {
            Backend::Pool(pool) => d.field("pool_size", &pool.status().max_size),
            Backend::Cluster(_) => d.field("cluster", &true),
        };
        d.field("timeout", &self.timeout).finish()
    }
}

impl Conn {
    pub(crate) fn new(backend: Backend, timeout: Duration, trace: Option<CallNames>) -> Self {
        let trace = trace.map(Arc::new);
        Conn {
            backend,
            timeout,
            trace,
        }
    }

    /// Whether calls get spans.
    pub(crate) fn traced(&self) -> bool {
        self.trace.is_some()
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The cluster client, when the store talks to a cluster.
    pub(crate) fn cluster(&self) -> Option<redis::cluster_async::ClusterConnection> {
        match &self.backend {
            Backend::Cluster(c) => Some(c.connection()),
            Backend::Pool(_) => None,
        }
    }

    /// How many times a stuck cluster client was replaced (0 off a cluster).
    pub(crate) fn cluster_rebuilds(&self) -> u64 {
        match &self.backend {
            Backend::Cluster(c) => c.rebuilds(),
            Backend::Pool(_) => 0,
        }
    }

    async fn get(&self, op: Op) -> Result<Handle, StoreError> {
        match &self.backend {
            Backend::Pool(pool) => pool
                .get()
                .await
                .map(Handle::Pooled)
                .map_err(|e| StoreError::failed(op, pool_error(e))),
            Backend::Cluster(cluster) => Ok(Handle::Cluster(cluster.checkout(self.timeout).await)),
        }
    }

    /// Checks out a connection, runs `send` on it within the timeout and
    /// classifies its answer, inside the span `span` names when calls are
    /// traced.
    async fn run<T>(
        &self,
        op: Op,
        effect: Effect,
        span: impl FnOnce(&CallNames) -> tracing::Span,
        send: impl AsyncFnOnce(&mut Handle) -> RedisResult<T>,
    ) -> Result<T, StoreError> {
        let call = async {
            let mut conn = self.get(op).await?;
            let answer = self.bounded(send(&mut conn)).await;
            settle(op, effect, conn, answer)
        };
        match &self.trace {
            None => call.await,
            Some(names) => call.instrument(span(names)).await,
        }
    }

    /// Runs one command, or a pipeline (a MULTI/EXEC transaction if atomic).
    pub(crate) async fn query<T: FromRedisValue + 'static>(
        &self,
        op: Op,
        effect: Effect,
        request: &impl Request,
    ) -> Result<T, StoreError> {
        let span = |names: &CallNames| request.span(names, op);
        self.run(op, effect, span, async |conn| request.send(conn).await)
            .await
    }

    /// Runs one read, giving an error the server answered (an unknown or
    /// forbidden command) back as `Ok(Err(message))`.
    pub(crate) async fn query_or_refusal<T: FromRedisValue>(
        &self,
        op: Op,
        cmd: &redis::Cmd,
    ) -> Result<Result<T, String>, StoreError> {
        let span = |names: &CallNames| names.command(op, cmd);
        let send = async |conn: &mut Handle| Ok(cmd.query_async(conn).await);
        match self.run(op, Effect::Read, span, send).await? {
            Ok(value) => Ok(Ok(value)),
            Err(e) if matches!(e.kind(), ErrorKind::Server(_) | ErrorKind::Extension) => {
                Ok(Err(e.to_string()))
            }
            Err(e) => Err(classify(op, Effect::Read, &e)),
        }
    }

    /// Runs a script by SHA; on NOSCRIPT (a restarted or flushed server, or
    /// a promoted replica that never loaded it) redis-rs loads it and runs
    /// it again, so callers never see it. `invocation` is `script`'s;
    /// `keys` are its KEYS as far as the caller kept them (for the span).
    pub(crate) async fn script<'k, T: FromRedisValue>(
        &self,
        op: Op,
        script: &redis::Script,
        keys: impl IntoIterator<Item = &'k [u8]>,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<T, StoreError> {
        let span = |names: &CallNames| names.script(op, script, keys);
        let send = async |conn: &mut Handle| invocation.invoke_async(conn).await;
        self.run(op, Effect::Write, span, send).await
    }

    /// Runs an `EVALSHA` of `script` that the caller built as a plain
    /// command (the hot path writes its arguments straight into one buffer);
    /// on NOSCRIPT loads the script and runs the command once more. In a
    /// cluster `SCRIPT LOAD` goes to every primary, so a promoted replica
    /// that never loaded it has it afterwards.
    pub(crate) async fn evalsha<T: FromRedisValue>(
        &self,
        op: Op,
        script: &redis::Script,
        cmd: &redis::Cmd,
    ) -> Result<T, StoreError> {
        let span = |names: &CallNames| names.evalsha(op, script, cmd);
        let send = async |conn: &mut Handle| match cmd.query_async(conn).await {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                script.prepare_invoke().load_async(conn).await?;
                cmd.query_async(conn).await
            }
            other => other,
        };
        self.run(op, Effect::Write, span, send).await
    }

    /// The call's answer, or `Err(timeout)` when none came within it.
    async fn bounded<T>(
        &self,
        call: impl Future<Output = RedisResult<T>>,
    ) -> Result<RedisResult<T>, Duration> {
        let answer = tokio::time::timeout(self.timeout, call)
            .await
            .map_err(|_| self.timeout);
        if let Backend::Cluster(cluster) = &self.backend {
            let timed_out = match &answer {
                Err(_) => true,
                Ok(Err(e)) => e.is_timeout(),
                Ok(Ok(_)) => false,
            };
            cluster.observe(!timed_out);
        }
        answer
    }
}

/// Classifies a call's answer. A pooled connection that failed or timed
/// out is taken out of the pool: it may be broken, and a late reply must
/// never be read as the answer to the next call. (The cluster client
/// reconnects to a node on its own.)
fn settle<T>(
    op: Op,
    effect: Effect,
    conn: Handle,
    answer: Result<RedisResult<T>, Duration>,
) -> Result<T, StoreError> {
    match answer {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => {
            // READONLY: the server was demoted (a Sentinel failover); a new
            // connection asks the sentinels for the current primary.
            if !matches!(e.kind(), ErrorKind::Server(_) | ErrorKind::Extension)
                || e.kind() == ErrorKind::Server(ServerErrorKind::ReadOnly)
            {
                conn.discard();
            }
            Err(classify(op, effect, &e))
        }
        Err(timeout) => {
            conn.discard();
            let detail = format!("no answer from Redis within {timeout:?}");
            Err(match effect {
                Effect::Read => StoreError::failed(op, detail),
                Effect::Write | Effect::Transaction => StoreError::indeterminate(op, detail),
            })
        }
    }
}

fn pool_error(e: PoolError<RedisError>) -> String {
    match e {
        PoolError::Timeout(kind) => format!("no Redis connection available in time ({kind:?})"),
        PoolError::Backend(e) => format!("cannot connect to Redis: {e}"),
        other => format!("connection pool: {other}"),
    }
}
