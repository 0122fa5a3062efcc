//! `RedisStore` and what every operation reads from it: the key layout, the connection, the scripts, the time source and the TTL rules; a leaf, so `ops/` and `replicas` import it without importing `store.rs`.

use crate::conn::{Conn, Effect};
use crate::keys::{KeyLayout, Keys};
use crate::options::TimeSource;
use crate::scripts::Scripts;
use claim_core::marker::parse_marker;
use claim_core::store::StoreConfig;
use claim_core::{Millis, Op, StoreError};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// Items per script call. Larger batches are split (each item stays
/// atomic; the batch is answered in order). Keeps every `unpack` far below
/// Lua's C stack limit (about 8000 values).
pub(crate) use claim_core::store::MAX_BATCH;

/// In explicit-time mode Redis still expires keys on its own clock; real
/// TTLs get this much slack so a key never disappears before its logical
/// expiry while a test's manual clock stands still.
const EXPLICIT_TIME_SLACK_MS: u64 = 3_600_000;

/// A `ClaimStore` over Redis. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct RedisStore {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub config: StoreConfig,
    pub keys: Keys,
    pub conn: Conn,
    pub scripts: Scripts,
    pub time: TimeSource,
    /// The URL without its password.
    pub url: String,
    /// Replicas to `WAIT` for after each claim and ack batch.
    pub replica_acks: u32,
    pub replicas: ReplicaCounters,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let i = &self.inner;
        f.debug_struct("RedisStore")
            .field("url", &i.url)
            .field("key_prefix", &i.keys.prefix())
            .field("time", &i.time)
            .field("conn", &i.conn)
            .finish_non_exhaustive()
    }
}

/// What the `WAIT`s after claims and acks have counted (`crate::replicas`
/// sends them and reads these).
#[derive(Debug, Default)]
pub(crate) struct ReplicaCounters {
    pub waits: AtomicU64,
    pub shortfalls: AtomicU64,
}

impl RedisStore {
    /// The key layout this store uses (its prefix applied).
    pub fn keys(&self) -> &Keys {
        &self.inner.keys
    }

    /// The key layout, fixed when the store was built: each operation
    /// matches on it once, to run its plain body or its hash-tagged one
    /// (`ops/<role>_cluster.rs`).
    pub(crate) fn layout(&self) -> KeyLayout {
        self.inner.keys.layout()
    }

    /// Whether every script call and multi-key command is checked to stay
    /// in one cluster slot before it is sent (`ops::call`): in the
    /// hash-tagged layout, where a cluster would answer `CROSSSLOT`; the
    /// plain layout pays nothing on its hot path.
    pub(crate) fn checks_slots(&self) -> bool {
        self.layout() == KeyLayout::HashTagged
    }

    pub(crate) fn conn(&self) -> &Conn {
        &self.inner.conn
    }

    /// How many times the cluster client stopped answering (timeouts in a
    /// row, no answer between) and was replaced by a new one; 0 off a
    /// cluster. Each replacement is also logged at warn.
    pub fn cluster_client_rebuilds(&self) -> u64 {
        self.inner.conn.cluster_rebuilds()
    }

    pub(crate) fn scripts(&self) -> &Scripts {
        &self.inner.scripts
    }

    /// The explicit time, when the store has one.
    pub(crate) fn explicit_now(&self) -> Option<Millis> {
        match &self.inner.time {
            TimeSource::Server => None,
            TimeSource::Clock(clock) => Some(clock.now()),
        }
    }

    /// Whether a terminal marker's value is live: with server time Redis
    /// keeps only live keys, so any value is; with an explicit clock its
    /// logical expiry must be ahead (a value without one counts as live).
    pub(crate) fn is_live_marker(&self, value: &str) -> bool {
        match self.explicit_now() {
            None => true,
            Some(now) => parse_marker(value).is_none_or(|(expiry, _)| expiry > now.0),
        }
    }

    /// The time argument scripts take: the explicit time, or "" for TIME.
    pub(crate) fn time_arg(&self) -> String {
        self.explicit_now()
            .map(|t| t.0.to_string())
            .unwrap_or_default()
    }

    /// The store's time: the explicit clock, or the server's TIME.
    pub(crate) async fn now_ms(&self, op: Op) -> Result<Millis, StoreError> {
        if let Some(now) = self.explicit_now() {
            return Ok(now);
        }
        let (secs, micros): (u64, u64) = self
            .conn()
            .query(op, Effect::Read, &redis::cmd("TIME"))
            .await?;
        Ok(Millis(secs * 1000 + micros / 1000))
    }

    /// The time a producer-side write uses: the explicit clock, else this
    /// host's clock, as the Go producer computes its expiries.
    pub(crate) fn producer_now(&self) -> Millis {
        self.explicit_now().unwrap_or_else(claim_core::unix_now_ms)
    }

    /// Why `list` cannot take a record about a member of `queue`, by its
    /// name: the configuration refuses it (a role of its own, outside the
    /// allow-list: `StoreConfig::result_list_refusal`) or its markers
    /// cannot share its slot in this layout ([`Keys::list_refusal`]).
    pub(crate) fn list_refusal(&self, queue: &str, list: &str) -> Option<String> {
        self.inner
            .config
            .result_list_refusal(queue, list)
            .or_else(|| self.keys().list_refusal(list))
    }

    /// What a script adds to a key's logical lifetime to get its PX.
    pub(crate) fn ttl_slack(&self) -> u64 {
        match self.inner.time {
            TimeSource::Server => 0,
            TimeSource::Clock(_) => EXPLICIT_TIME_SLACK_MS,
        }
    }

    /// A Redis TTL for a key that logically lives `ms`.
    pub(crate) fn real_ttl(&self, ms: u64) -> u64 {
        match self.inner.time {
            TimeSource::Server => ms.max(1),
            TimeSource::Clock(_) => ms.saturating_add(EXPLICIT_TIME_SLACK_MS),
        }
    }
}
