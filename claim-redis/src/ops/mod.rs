//! One module per store operation, named after the Lua script it runs (or the trait method, for plain commands).
//!
//! Each module holds one free function, with the trait method's name,
//! taking the store first; `store.rs` routes every `ClaimStore` and
//! `ClaimInspect` method to the function of its name here, generated from
//! `claim_core::store_methods!`. Script replies and argument tags are read and written in
//! [`crate::codec`] only.
//!
//! | module | runs | answers |
//! |---|---|---|
//! | `now` | the injected clock, or TIME | `now` |
//! | `ping` | PING | `ping` |
//! | `submit` | one MULTI, as the Go producer | `submit` |
//! | `enqueue` | `lua/enqueue.lua` | `enqueue` |
//! | `fetch_payloads` | MGET of payload keys | `fetch_payloads` |
//! | `cancel` | `lua/cancel.lua` | `cancel` |
//! | `cancelled` | MGET of cancel markers | `cancelled` |
//! | `peek` | ZRANGE of the pending set | `peek` |
//! | `claim` | `lua/claim.lua` | `claim` |
//! | `renew` | `lua/renew.lua` | `renew` |
//! | `ack` | `lua/ack.lua`; hash-tagged: `ack_split` | `ack` |
//! | `ack_split` | `ack_tagged`, or `ack_fence`, `push_once`, `ack_drop` | `ack` (hash-tagged) |
//! | `ack_keys` | `lua/del_if.lua` per producer or payload key | after a hash-tagged `ack` |
//! | `push_once` | `lua/push_once.lua` | `ack`, `reclaim_expired` (hash-tagged) |
//! | `release` | hash-tagged: marker reads; `lua/release.lua` | `release`, `sweep` |
//! | `park_retry` | hash-tagged: marker reads; `lua/park_retry.lua` | `park_retry` |
//! | `promote` | read, then `lua/promote.lua` | `promote_due` |
//! | `reclaim` | reads, then `lua/reclaim.lua` | `reclaim_expired` |
//! | `repair_index` | `lua/repair_index.lua` | part of `reclaim_expired` |
//! | `dead_letter` | `lua/dead_letter.lua` | `dead_letter` |
//! | `depths` | ZCARD and HLENs in one MULTI | `depths` |
//! | `retry_depth` | ZCARD of the retry set | `retry_depth` |
//! | `claims` | the claim hashes and index in one MULTI | `claims` |
//! | `dead_entries` | HGETALL of the dead hash | `dead_entries` |
//! | `retry_entries` | ZRANGE of the retry set | `retry_entries` |
//! | `results` | LRANGE of a result list | `results` |
//! | `is_terminal` | GET of the terminal marker | `is_terminal` |
//! | `list_ttl` | TTL of a result list | `list_ttl` |
//! | `list_len` | LLEN of a result list | `list_len` |
//! | `paused` | EXISTS of `<queue>:paused` | `paused` |
//! | `redrive_dead` | marker reads, then `lua/redrive_dead.lua` | `ClaimAdmin::redrive_dead` |
//! | `purge_dead` | `lua/purge_dead.lua` | `ClaimAdmin::purge_dead` |
//! | `release_claim` | hash-tagged: marker reads; `lua/release_claim.lua` | `ClaimAdmin::release_claim` |
//! | `set_paused` | SET .. GET or DEL of `<queue>:paused` | `ClaimAdmin::set_paused` |
//!
//! Hash-tagged (cluster) layout helpers: `call` (every script call and
//! multi-key command, slot-checked), `per_request` (per-request keys read
//! and deleted per slot), `answered` (the markers of claimed generations,
//! read before release, sweep, admin release and parking), `retry_sets`
//! (the shared and per-queue retry
//! sets), `promote_tagged` and `reclaim_tagged` (those operations split
//! by slot).

pub(crate) mod ack;
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
pub(crate) mod retry_sets;
pub(crate) mod script_args;
pub(crate) mod set_paused;
pub(crate) mod submit;

/// The router finds each method's function by the method's name; these
/// modules are named after their scripts.
pub(crate) use self::{promote as promote_due, reclaim as reclaim_expired, release as sweep};
