//! `RedisStore::connect` (options checked, topology opened, layout chosen once) and the `ClaimStore` and `ClaimInspect` impls that route each method to its module in `ops/`.

use crate::keys::{KeyLayout, Keys};
use crate::ops;
use crate::options::Topology;
use crate::options::{
    ConnectError, RedisStoreOptions, check_options, check_topology, check_url, redact,
};
use crate::scripts::Scripts;
use crate::state::{Inner, RedisStore, ReplicaCounters};
use claim_core::Op;
use claim_core::{StoreError, route_store};
use std::sync::Arc;

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

/// One method's call: the function of its name in its module of
/// [`crate::ops`] (the `now` marker is the memory store's concern).
macro_rules! ops_call {
    // Claims and acks wait for `replica_acks` replicas afterwards: on the
    // queue's slot, and for acks on each result list's slot too (in the
    // hash-tagged layout a list in another slot is waited for inside the
    // ack, before its claims are dropped: ops/ack_split.rs).
    ($store:ident, claim($queue:ident, $owner:ident, $items:ident) $($now:ident)?) => {{
        let out = ops::claim::claim($store, $queue, $owner, $items).await;
        if $store.inner.replica_acks > 0 && out.is_ok() {
            let pending = $store.keys().queue($queue).pending;
            $store.wait_replicas(Op::Claim, &[pending.as_str()]).await;
        }
        out
    }};
    ($store:ident, ack($queue:ident, $owner:ident, $items:ident) $($now:ident)?) => {{
        let out = ops::ack::ack($store, $queue, $owner, $items).await;
        if $store.inner.replica_acks > 0 && out.is_ok() {
            let mut keys = vec![$store.keys().queue($queue).pending];
            if !$store.keys().tagged() {
                keys.extend($items.iter().map(|i| $store.keys().list(&i.result_list)));
            }
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            $store.wait_replicas(Op::Ack, &keys).await;
        }
        out
    }};
    ($store:ident, $name:ident($($arg:ident),*) $($now:ident)?) => {
        ops::$name::$name($store, $($arg),*).await
    };
}

claim_core::store_methods!(route_store RedisStore => inner.config, ops_call;);

/// The operator's operations: each runs its module in [`crate::ops`].
#[claim_core::layer::async_trait]
impl claim_core::ClaimAdmin for RedisStore {
    async fn redrive_dead(
        &self,
        queue: &str,
        members: &[claim_core::Member],
    ) -> Result<Vec<claim_core::Redrive>, StoreError> {
        ops::redrive_dead::redrive_dead(self, queue, members).await
    }

    async fn purge_dead(
        &self,
        queue: &str,
        members: &[claim_core::Member],
    ) -> Result<Vec<bool>, StoreError> {
        ops::purge_dead::purge_dead(self, queue, members).await
    }

    async fn release_claim(
        &self,
        queue: &str,
        generation: &claim_core::Generation,
    ) -> Result<Option<claim_core::OwnerToken>, StoreError> {
        ops::release_claim::release_claim(self, queue, generation).await
    }

    async fn set_paused(&self, queue: &str, paused: bool) -> Result<bool, StoreError> {
        ops::set_paused::set_paused(self, queue, paused).await
    }
}
