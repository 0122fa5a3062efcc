//! The connection pool and the one place Redis errors become `StoreError`s, with a timeout on every call.
//!
//! Classification: a call that never reached Redis (no connection, pool
//! exhausted, refused) or that Redis answered with an error (scripts
//! validate before their first write) definitely did not happen: `Failed`.
//! A write whose connection broke or timed out after sending may have run:
//! `Indeterminate`. A read that times out changed nothing: `Failed`.

use claim_core::StoreError;
use deadpool_redis::{Pool, PoolError};
use redis::{ErrorKind, FromRedisValue, RedisError, ServerErrorKind};
use std::future::Future;
use std::time::Duration;

/// What a call may have changed, which decides how its errors are classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    Read,
    /// One command or one script: a server error means it did nothing.
    Write,
    /// MULTI/EXEC: a command failing inside EXEC leaves the others applied.
    Transaction,
}

#[derive(Clone)]
pub(crate) struct Conn {
    pool: Pool,
    timeout: Duration,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.pool.status();
        f.debug_struct("Conn")
            .field("pool_size", &status.max_size)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Conn {
    pub(crate) fn new(pool: Pool, timeout: Duration) -> Self {
        Conn { pool, timeout }
    }

    async fn get(&self, op: &'static str) -> Result<deadpool_redis::Connection, StoreError> {
        self.pool
            .get()
            .await
            .map_err(|e| StoreError::failed(op, pool_error(e)))
    }

    /// Runs one command.
    pub(crate) async fn query<T: FromRedisValue>(
        &self,
        op: &'static str,
        effect: Effect,
        cmd: &redis::Cmd,
    ) -> Result<T, StoreError> {
        let mut conn = self.get(op).await?;
        self.bounded(op, effect, cmd.query_async(&mut conn)).await
    }

    /// Runs one read, giving an error the server answered (an unknown or
    /// forbidden command) back as `Ok(Err(message))`.
    pub(crate) async fn query_or_refusal<T: FromRedisValue>(
        &self,
        op: &'static str,
        cmd: &redis::Cmd,
    ) -> Result<Result<T, String>, StoreError> {
        let mut conn = self.get(op).await?;
        let answer: Result<T, RedisError> = self
            .bounded(op, Effect::Read, async {
                Ok(cmd.query_async(&mut conn).await)
            })
            .await?;
        match answer {
            Ok(value) => Ok(Ok(value)),
            Err(e) if matches!(e.kind(), ErrorKind::Server(_) | ErrorKind::Extension) => {
                Ok(Err(e.to_string()))
            }
            Err(e) => Err(classify(op, Effect::Read, &e)),
        }
    }

    /// Runs a pipeline (or, if atomic, a MULTI/EXEC transaction).
    pub(crate) async fn pipe<T: FromRedisValue>(
        &self,
        op: &'static str,
        effect: Effect,
        pipe: &redis::Pipeline,
    ) -> Result<T, StoreError> {
        let mut conn = self.get(op).await?;
        self.bounded(op, effect, pipe.query_async(&mut conn)).await
    }

    /// Runs a script by SHA; on NOSCRIPT (a restarted or flushed server)
    /// redis-rs loads it and runs it again, so callers never see it.
    pub(crate) async fn script<T: FromRedisValue>(
        &self,
        op: &'static str,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<T, StoreError> {
        let mut conn = self.get(op).await?;
        self.bounded(op, Effect::Write, invocation.invoke_async(&mut conn))
            .await
    }

    async fn bounded<T>(
        &self,
        op: &'static str,
        effect: Effect,
        call: impl Future<Output = Result<T, RedisError>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(classify(op, effect, &e)),
            Err(_) => {
                let detail = format!("no answer from Redis within {:?}", self.timeout);
                Err(match effect {
                    Effect::Read => StoreError::failed(op, detail),
                    Effect::Write | Effect::Transaction => StoreError::indeterminate(op, detail),
                })
            }
        }
    }
}

fn pool_error(e: PoolError) -> String {
    match e {
        PoolError::Timeout(kind) => format!("no Redis connection available in time ({kind:?})"),
        PoolError::Backend(e) => format!("cannot connect to Redis: {e}"),
        other => format!("connection pool: {other}"),
    }
}

/// Maps a Redis error to a store error (see the module docs).
pub(crate) fn classify(op: &'static str, effect: Effect, e: &RedisError) -> StoreError {
    let detail = e.to_string();
    if e.is_connection_refusal() {
        return StoreError::failed(op, detail);
    }
    match e.kind() {
        ErrorKind::Server(ServerErrorKind::ExecAbort) => StoreError::failed(op, detail),
        ErrorKind::Server(_) | ErrorKind::Extension if effect == Effect::Transaction => {
            StoreError::indeterminate(op, detail)
        }
        ErrorKind::Server(_)
        | ErrorKind::Extension
        | ErrorKind::AuthenticationFailed
        | ErrorKind::InvalidClientConfig
        | ErrorKind::Client => StoreError::failed(op, detail),
        _ if effect == Effect::Read => StoreError::failed(op, detail),
        _ => StoreError::indeterminate(op, detail),
    }
}

/// A reply that does not have the shape the store expects. The call ran,
/// so for a write its effect is unknown to the caller.
pub(crate) fn bad_reply(
    op: &'static str,
    effect: Effect,
    what: impl std::fmt::Display,
) -> StoreError {
    let detail = format!("unexpected reply from Redis: {what}");
    match effect {
        Effect::Read => StoreError::failed(op, detail),
        Effect::Write | Effect::Transaction => StoreError::indeterminate(op, detail),
    }
}
