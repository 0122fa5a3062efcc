//! One module per store operation, named after the Lua script it runs (or the trait method, for plain commands); the hash-tagged (cluster) layout's counterparts in `cluster`, and shared leaves.
//!
//! Each operation module holds one entry point, with the trait method's
//! name, taking the store first; `store/roles.rs` calls it from the trait
//! method (`ClaimStore`, `ClaimInspect`, `ClaimProducer`, `ClaimAdmin`,
//! `ListReads`). An operation that runs differently in the
//! hash-tagged layout matches the store's layout (`RedisStore::layout`,
//! fixed at construction) once, at the top of its entry point, and runs
//! its plain half there or its `cluster::<op>` counterpart; helpers take no
//! layout flag. Script replies and argument tags are read and written in
//! [`crate::codec`] only.
//!
//! | module | runs | answers |
//! |---|---|---|
//! | `now` | the injected clock, or TIME | `now` |
//! | `ping` | PING | `ping` |
//! | `submit` | one MULTI, as the Go producer; hash-tagged: `cluster::submit` | `submit` |
//! | `enqueue` | `lua/enqueue.lua`; hash-tagged: `cluster::enqueue` | `enqueue` |
//! | `fetch_payloads` | MGET of payload keys; hash-tagged: per slot | `fetch_payloads` |
//! | `cancel` | `lua/cancel.lua`; hash-tagged: `cluster::cancel` | `cancel` |
//! | `cancelled` | MGET of cancel markers; hash-tagged: per slot | `cancelled` |
//! | `peek` | ZRANGE of the pending set from a rank, or ZRANGEBYSCORE above a score | `peek`, `peek_after` |
//! | `claim` | `lua/claim.lua`; hash-tagged: `cluster::claim` | `claim` |
//! | `renew` | `lua/renew.lua` | `renew` |
//! | `ack` | `lua/ack.lua`; hash-tagged: `cluster::ack` | `ack` |
//! | `release` | `lua/release.lua`; hash-tagged: marker reads first (`cluster::answered`) | `release` (the runtime's shutdown sweep too) |
//! | `park_retry` | `lua/park_retry.lua`; hash-tagged: `cluster::park_retry` | `park_retry` |
//! | `promote` | read, then `lua/promote.lua`; hash-tagged: `cluster::promote` | `promote_due` |
//! | `reclaim` | reads, then `lua/reclaim.lua`; hash-tagged: `cluster::reclaim` | `reclaim_expired` |
//! | `repair_index` | `lua/repair_index.lua` | part of `reclaim_expired` |
//! | `dead_letter` | `lua/dead_letter.lua` | `dead_letter` |
//! | `depths` | ZCARD and HLENs in one MULTI | `depths` |
//! | `retry_depth` | ZCARD of each retry set | `retry_depth` |
//! | `claims` | the claim hashes and index in one MULTI | `claims` |
//! | `dead_entries` | HGETALL of the dead hash | `dead_entries` |
//! | `retry_entries` | ZRANGE of each retry set | `retry_entries` |
//! | `results` | LRANGE of a result list | `ListReads::results` |
//! | `is_terminal` | GET of the terminal marker; hash-tagged: `cluster::is_terminal` | `is_terminal` |
//! | `list_ttl` | TTL of a result list | `ListReads::list_ttl` |
//! | `list_len` | LLEN of a result list | `list_len` |
//! | `paused` | EXISTS of `<queue>:paused` | `paused` |
//! | `redrive_dead` | marker reads, then `lua/redrive_dead.lua` | `ClaimAdmin::redrive_dead` |
//! | `purge_dead` | `lua/purge_dead.lua` | `ClaimAdmin::purge_dead` |
//! | `release_claim` | `lua/release_claim.lua`; hash-tagged: marker reads first | `ClaimAdmin::release_claim` |
//! | `set_paused` | SET .. GET or DEL of `<queue>:paused` | `ClaimAdmin::set_paused` |
//! | `retry_now` | `lua/retry_now.lua`; hash-tagged: `cluster::retry_now` | `ClaimAdmin::retry_now` |
//!
//! Shared leaves (imported by an operation and its cluster counterpart,
//! importing neither): `batches` (the chunk loop of batched calls), `call` (every script call and multi-key command,
//! slot-checked in the hash-tagged layout; `evalsha`), `script_args` (the
//! arguments ack.lua, claim.lua and enqueue.lua take alike in both
//! layouts), `owner_flags` (the owner-checked call of release and
//! parking), `claim_batches` (claim's batches and failure handling),
//! `reclaim_passes` (reclaim's passes in the model's order),
//! `producer_writes` (the producer's per-request writes), `retry_sets`
//! (the retry sets to read, by layout).

pub(crate) mod ack;
pub(crate) mod batches;
pub(crate) mod call;
pub(crate) mod cancel;
pub(crate) mod cancelled;
pub(crate) mod claim;
pub(crate) mod claim_batches;
pub(crate) mod claims;
pub(crate) mod cluster;
pub(crate) mod dead_entries;
pub(crate) mod dead_letter;
pub(crate) mod depths;
pub(crate) mod enqueue;
pub(crate) mod fetch_payloads;
pub(crate) mod is_terminal;
pub(crate) mod list_len;
pub(crate) mod list_ttl;
pub(crate) mod now;
pub(crate) mod owner_flags;
pub(crate) mod park_retry;
pub(crate) mod paused;
pub(crate) mod peek;
pub(crate) mod ping;
pub(crate) mod producer_writes;
pub(crate) mod promote;
pub(crate) mod purge_dead;
pub(crate) mod reclaim;
pub(crate) mod reclaim_passes;
pub(crate) mod redrive_dead;
pub(crate) mod release;
pub(crate) mod release_claim;
pub(crate) mod renew;
pub(crate) mod repair_index;
pub(crate) mod results;
pub(crate) mod retry_depth;
pub(crate) mod retry_entries;
pub(crate) mod retry_now;
pub(crate) mod retry_sets;
pub(crate) mod retry_target;
pub(crate) mod script_args;
pub(crate) mod set_paused;
pub(crate) mod submit;
