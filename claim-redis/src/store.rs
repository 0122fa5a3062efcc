//! `RedisStore`: construction (`connect`), time and the settings its operations share; its traits are written out in `store/roles.rs`.

use crate::conn::{Conn, Effect};
use crate::keys::{KeyLayout, Keys};
use crate::options::Topology;
use crate::options::{
    ConnectError, RedisStoreOptions, TimeSource, check_options, check_topology, check_url, redact,
};
use crate::replicas::ReplicaCounters;
use crate::scripts::Scripts;
use claim_core::Op;
use claim_core::store::StoreConfig;
use claim_core::{Millis, StoreError};
use std::sync::Arc;

mod roles;

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

impl RedisStore {
    /// Validates the options, opens the connections the topology asks
    /// for, checks the server and loads the scripts (on every node).
    pub async fn connect(options: RedisStoreOptions) -> Result<RedisStore, ConnectError> {
        check_options(&options)?;
        let info = check_url(&options.url)?;
        check_topology(&options, &info)?;
        check_list_slots(&options)?;
        let url = redact(&options.url);
        // rediss:// needs a process-wide rustls crypto provider; keep one
        // the application installed, else install ring.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let scripts = Scripts::new();
        let conn = crate::connect::open(&options, info, &url, &scripts).await?;
        // A cluster runs every call in one slot: the hash-tagged layout,
        // whatever the options said.
        let layout = match options.topology {
            Topology::Cluster { .. } => KeyLayout::HashTagged,
            _ => options.key_layout,
        };
        tracing::debug!(url = %url, mode = options.topology.mode(), ?layout,
            prefix = %options.key_prefix, "connected to Redis; scripts loaded");
        Ok(RedisStore {
            inner: Arc::new(Inner {
                keys: Keys::with_layout(&options.key_prefix, &options.config.retry_set, layout),
                config: options.config,
                conn,
                scripts,
                time: options.time,
                url,
                replica_acks: options.replica_acks,
                replicas: ReplicaCounters::default(),
            }),
        })
    }

    /// The key layout this store uses (its prefix applied).
    pub fn keys(&self) -> &Keys {
        &self.inner.keys
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

/// Refuses a configured result list (the default, a queue's) whose
/// terminal markers could not share its slot in the layout the store will
/// use ([`Keys::list_refusal`]), naming the list, before anything is sent.
fn check_list_slots(options: &RedisStoreOptions) -> Result<(), ConnectError> {
    let layout = match options.topology {
        Topology::Cluster { .. } => KeyLayout::HashTagged,
        _ => options.key_layout,
    };
    let config = &options.config;
    let keys = Keys::with_layout(&options.key_prefix, &config.retry_set, layout);
    let lists =
        std::iter::once(&config.default_result_list).chain(config.queue_result_lists.values());
    match lists.filter_map(|l| keys.list_refusal(l)).next() {
        Some(why) => Err(ConnectError::Config(why)),
        None => Ok(()),
    }
}
