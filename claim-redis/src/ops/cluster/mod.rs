//! The hash-tagged (Redis Cluster) layout's operations, one module per operation: each runs its operation's scripts slot by slot, reading the per-request keys of other slots first and writing them after, as its header argues. `ops::<op>` picks these once, at the top, from the store's layout.

pub(crate) mod ack;
pub(crate) mod answered;
pub(crate) mod cancel;
pub(crate) mod claim;
pub(crate) mod enqueue;
pub(crate) mod is_terminal;
pub(crate) mod node_keys;
pub(crate) mod park_retry;
pub(crate) mod promote;
pub(crate) mod push_once;
pub(crate) mod reclaim;
pub(crate) mod request_keys;
pub(crate) mod retry_now;
pub(crate) mod retry_sets;
pub(crate) mod submit;
