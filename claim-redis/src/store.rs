//! `RedisStore::connect` (options checked, topology opened, layout chosen once); the store's traits are written out in `ops/mod.rs`.

use crate::keys::Keys;
use crate::options::{
    ConnectError, RedisStoreOptions, check_options, check_topology, check_url, redact,
};
use crate::scripts::Scripts;
use crate::state::{Inner, RedisStore, ReplicaCounters};
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
        let layout = options.layout();
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
    let config = &options.config;
    let keys = Keys::with_layout(&options.key_prefix, &config.retry_set, options.layout());
    let lists =
        std::iter::once(&config.default_result_list).chain(config.queue_result_lists.values());
    match lists.filter_map(|l| keys.list_refusal(l)).next() {
        Some(why) => Err(ConnectError::Config(why)),
        None => Ok(()),
    }
}
