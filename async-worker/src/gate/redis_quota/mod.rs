//! The `redis-quota` gate: a per-tenant quota (concurrent requests, or requests per window) counted in Redis and shared by every processor that uses the same Redis.
//!
//! The tenant is `metadata[attribute]` (default `userid`); its counter is
//! the key `<prefix><attribute>:<value>`. A request without the attribute,
//! or a gate with a `mode` it does not know, continues untouched (Go's
//! HEAD does not validate `mode` or `gating_mode`). Otherwise the gate
//! labels the request `classification` = `reserved` (it took a slot, or an
//! admission in the window) or `overflow` (the quota is used up), and:
//! - `gating_mode` `blocking` (the default): overflow is refused (the
//!   queue gate counts it `quota_exhausted`); reserved continues.
//! - any other `gating_mode` (classifying): every request continues, with
//!   its label, for the merge policy and later gates to act on.
//!
//! A concurrency slot is given back by the release the gate pushes, when
//! the request's processing ends; a rate-limit admission has nothing to
//! give back. A Redis or script error is the request's gate error.

mod scripts;

use super::contract::{DispatchGate, GateConfigError, GateEnv, GateError};
use super::contract::{GateRequest, Release, Releases, Verdict};
use super::params::{Nanos, Params};
use super::redis_budget::required_address;
use super::redis_clients::RedisClients;
use redis::aio::ConnectionManager;
use std::fmt;
use std::sync::Arc;

/// The label a quota gate sets, as the merge policy and the counters read it.
pub const CLASSIFICATION_LABEL: &str = "classification";

/// The longest attribute value that is counted; a longer one is `overflow`.
///
/// The value comes from the request's metadata, which whoever enqueues the
/// request controls, and every distinct value is a Redis key that lives for
/// the TTL. Unbounded, a flood of requests with huge, distinct values would
/// fill Redis with huge keys, so such a value never reaches Redis: it is
/// classified `overflow` (refused when blocking), which reserves nothing.
/// 256 bytes is the bound the fairness stamp puts on the same attribute.
pub const MAX_VALUE_BYTES: usize = 256;

const NANOS_PER_SEC: i64 = 1_000_000_000;
/// Go's counter TTL when the window is under a second (concurrency mode).
const DEFAULT_CONCURRENCY_TTL_SECS: i64 = 300;
/// Go's admissions TTL when twice the window is under a second (rate-limit mode).
const DEFAULT_RATE_LIMIT_TTL_SECS: i64 = 3600;

/// What the quota counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaMode {
    /// `rate-limit` (the default): admissions per trailing `window`.
    RateLimit,
    /// `concurrency`: requests in flight.
    Concurrency,
}

impl QuotaMode {
    /// `None` for a mode Go's HEAD accepts without knowing it (it gates nothing).
    fn parse(mode: &str) -> Option<Self> {
        match mode {
            "rate-limit" => Some(QuotaMode::RateLimit),
            "concurrency" => Some(QuotaMode::Concurrency),
            _ => None,
        }
    }
}

/// How a request fared against its quota.
enum Reservation {
    /// Within the quota (`reserved`), with the release of what it took.
    Reserved(Option<Release>),
    /// The quota is used up (`overflow`); nothing was taken.
    Overflow,
}

/// Where the rate limit reads the time: nanoseconds since the Unix epoch.
#[derive(Clone)]
pub struct NanosClock(Arc<dyn Fn() -> i64 + Send + Sync>);

impl NanosClock {
    /// The system's wall clock (Go reads `time.Now`).
    pub fn system() -> Self {
        NanosClock(Arc::new(|| {
            let since_epoch = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            i64::try_from(since_epoch.as_nanos()).unwrap_or(i64::MAX)
        }))
    }

    /// A clock reading `now` (a test's controlled time).
    pub fn from_fn(now: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        NanosClock(Arc::new(now))
    }

    fn now(&self) -> i64 {
        (self.0)()
    }
}

impl fmt::Debug for NanosClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NanosClock")
    }
}

/// `gate_type: "redis-quota"`. See the module docs.
#[derive(Debug, Clone)]
pub struct RedisQuotaGate {
    clients: RedisClients,
    address: String,
    attribute: String,
    /// `None`: a mode nobody knows, which gates nothing.
    mode: Option<QuotaMode>,
    blocking: bool,
    limit: i64,
    window_nanos: i64,
    prefix: String,
    clock: NanosClock,
}

impl RedisQuotaGate {
    /// From `gate_params`: `address` (required), `attribute` (`userid`),
    /// `mode` (`rate-limit`), `limit` (required, > 0), `window` (`1m`, a Go
    /// duration), `prefix` (`quota:`), `gating_mode` (`blocking`), checked
    /// in Go's order.
    pub fn from_params(params: Params, env: &GateEnv) -> Result<Self, GateConfigError> {
        let address = required_address(params)?;
        let limit = params.get("limit", 0)?;
        if limit <= 0 {
            return Err(GateConfigError(format!(
                "redis-quota gate requires a positive 'limit', got {limit}"
            )));
        }
        let Nanos(window_nanos) = params.get("window", Nanos(60 * NANOS_PER_SEC))?;
        Ok(RedisQuotaGate {
            clients: env.redis.clone(),
            address,
            attribute: params.text("attribute", "userid"),
            mode: QuotaMode::parse(&params.text("mode", "rate-limit")),
            blocking: params.text("gating_mode", "blocking") == "blocking",
            limit,
            window_nanos,
            prefix: params.text("prefix", "quota:"),
            clock: NanosClock::system(),
        })
    }

    /// The same gate reading the time from `clock`.
    pub fn with_clock(self, clock: NanosClock) -> Self {
        RedisQuotaGate { clock, ..self }
    }

    /// The key counting `value`; always under the configured prefix.
    fn key(&self, value: &str) -> String {
        format!("{}{}:{}", self.prefix, self.attribute, value)
    }

    /// Whole seconds of the window, as Go's `int(window.Seconds())`.
    fn window_secs(&self) -> i64 {
        self.window_nanos / NANOS_PER_SEC
    }

    fn concurrency_ttl_secs(&self) -> i64 {
        Some(self.window_secs())
            .filter(|secs| *secs > 0)
            .unwrap_or(DEFAULT_CONCURRENCY_TTL_SECS)
    }

    fn rate_limit_ttl_secs(&self) -> i64 {
        Some(self.window_secs().saturating_mul(2))
            .filter(|secs| *secs > 0)
            .unwrap_or(DEFAULT_RATE_LIMIT_TTL_SECS)
    }

    fn connection(&self) -> Result<ConnectionManager, GateError> {
        self.clients
            .connection(&self.address)
            .map_err(|e| script_error(e, "connect"))
    }

    /// Counts the request against `key`.
    async fn reserve(&self, mode: QuotaMode, key: String) -> Result<Reservation, GateError> {
        let mut connection = self.connection()?;
        match mode {
            QuotaMode::Concurrency => {
                let ttl_secs = self.concurrency_ttl_secs();
                let taken = scripts::take_slot(&mut connection, &key, self.limit, ttl_secs)
                    .await
                    .map_err(|e| script_error(e, "concurrency"))?;
                Ok(if taken {
                    let release = slot_release(connection, key, ttl_secs, &self.attribute);
                    Reservation::Reserved(Some(release))
                } else {
                    Reservation::Overflow
                })
            }
            QuotaMode::RateLimit => {
                let admission = scripts::Admission {
                    key: &key,
                    limit: self.limit,
                    now_nanos: self.clock.now(),
                    window_nanos: self.window_nanos,
                    ttl_secs: self.rate_limit_ttl_secs(),
                };
                let admitted = scripts::admit(&mut connection, &admission)
                    .await
                    .map_err(|e| script_error(e, "rate-limit"))?;
                Ok(if admitted {
                    Reservation::Reserved(None)
                } else {
                    Reservation::Overflow
                })
            }
        }
    }
}

fn script_error(error: redis::RedisError, step: &str) -> GateError {
    GateError::Source {
        context: format!("redis-quota gate ({step})"),
        source: Box::new(error),
    }
}

/// The release of one concurrency slot: runs the release script once. A
/// failure is logged (the counter's TTL frees the slot in the end); the
/// tenant's value is not logged, it is the request's data.
fn slot_release(
    mut connection: ConnectionManager,
    key: String,
    ttl_secs: i64,
    attribute: &str,
) -> Release {
    let attribute = attribute.to_owned();
    Box::new(move || {
        Box::pin(async move {
            match scripts::give_back_slot(&mut connection, &key, ttl_secs).await {
                Ok(left) if left < 0 => {
                    tracing::debug!(%attribute, "redis-quota: the counter was gone when its slot was given back");
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!(%error, %attribute, "redis-quota: cannot give back a concurrency slot; it frees when the counter expires");
                }
            }
        })
    })
}

#[async_trait::async_trait]
impl DispatchGate for RedisQuotaGate {
    /// Always open: the quota decides per request.
    async fn budget(&self) -> f64 {
        1.0
    }

    async fn apply(
        &self,
        request: &mut GateRequest<'_>,
        releases: &mut Releases,
    ) -> Result<Verdict, GateError> {
        let Some(value) = request.metadata.get(&self.attribute) else {
            return Ok(Verdict::Continue);
        };
        let Some(mode) = self.mode else {
            return Ok(Verdict::Continue);
        };
        let reservation = if value.len() > MAX_VALUE_BYTES {
            tracing::debug!(attribute = %self.attribute, bytes = value.len(), "redis-quota: the attribute value is too long to count; overflow");
            Reservation::Overflow
        } else {
            self.reserve(mode, self.key(value)).await?
        };
        let (label, release, verdict) = match reservation {
            Reservation::Reserved(release) => ("reserved", release, Verdict::Continue),
            Reservation::Overflow if self.blocking => ("overflow", None, Verdict::Refuse),
            Reservation::Overflow => ("overflow", None, Verdict::Continue),
        };
        request
            .labels
            .insert(CLASSIFICATION_LABEL.to_owned(), label.to_owned());
        if let Some(release) = release {
            releases.push(release);
        }
        Ok(verdict)
    }
}

#[cfg(test)]
#[path = "redis_quota_tests.rs"]
mod tests;
