//! The quota's Redis side: its three Lua scripts (each file says what it takes, returns and why it is safe) and the calls that run them.

use redis::aio::ConnectionManager;
use redis::{RedisResult, Script};
use std::sync::LazyLock;

static CONCURRENCY_ACQUIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("concurrency_acquire.lua")));
static CONCURRENCY_RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("concurrency_release.lua")));
static RATE_LIMIT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("rate_limit.lua")));

/// Takes one of `limit` slots on `key`; `false` when all are held.
pub(super) async fn take_slot(
    connection: &mut ConnectionManager,
    key: &str,
    limit: i64,
    ttl_secs: i64,
) -> RedisResult<bool> {
    let taken: i64 = CONCURRENCY_ACQUIRE
        .key(key)
        .arg(limit)
        .arg(ttl_secs)
        .invoke_async(connection)
        .await?;
    Ok(taken == 1)
}

/// Gives back a slot [`take_slot`] took: the slots still held, or -1 when
/// the counter was gone.
pub(super) async fn give_back_slot(
    connection: &mut ConnectionManager,
    key: &str,
    ttl_secs: i64,
) -> RedisResult<i64> {
    CONCURRENCY_RELEASE
        .key(key)
        .arg(ttl_secs)
        .invoke_async(connection)
        .await
}

/// One admission to a rate limit's window.
pub(super) struct Admission<'a> {
    pub key: &'a str,
    pub limit: i64,
    /// Now, in nanoseconds since the Unix epoch.
    pub now_nanos: i64,
    /// The window's length in nanoseconds (0 or less admits every request).
    pub window_nanos: i64,
    pub ttl_secs: i64,
}

/// Admits one request unless `limit` were admitted within the window;
/// `false` when the limit is reached.
pub(super) async fn admit(
    connection: &mut ConnectionManager,
    admission: &Admission<'_>,
) -> RedisResult<bool> {
    let window_start = admission.now_nanos.saturating_sub(admission.window_nanos);
    let member = format!("{}-{:016x}", admission.now_nanos, rand::random::<u64>());
    let admitted: i64 = RATE_LIMIT
        .key(admission.key)
        .arg(window_start)
        .arg(admission.limit)
        .arg(admission.now_nanos)
        .arg(member)
        .arg(admission.ttl_secs)
        .invoke_async(connection)
        .await?;
    Ok(admitted == 1)
}
