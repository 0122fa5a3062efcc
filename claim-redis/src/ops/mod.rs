//! One module per store operation, named after the Lua script it runs (or the trait method, for plain commands).
//!
//! Each module holds one free function, with the trait method's name,
//! taking the store first; `store/roles.rs` calls it from the trait method
//! (`ClaimStore`, `ClaimInspect`, `ClaimProducer`, `ClaimAdmin`, and the
//! tests' `ListReads`). Script replies and argument tags are read and written in
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
//! | `release` | hash-tagged: marker reads; `lua/release.lua` | `release` |
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
//! | `results` | LRANGE of a result list | `ListReads::results` (tests) |
//! | `is_terminal` | GET of the terminal marker | `is_terminal` |
//! | `list_ttl` | TTL of a result list | `ListReads::list_ttl` (tests) |
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
//! read before release, admin release and parking), `retry_sets`
//! (the shared and per-queue retry
//! sets), `promote_tagged` and `reclaim_tagged` (those operations split
//! by slot).

pub(crate) mod ack;
pub(crate) mod ack_keys;
pub(crate) mod ack_split;
pub(crate) mod answered;
pub(crate) mod call;
pub(crate) mod cancel;
pub(crate) mod cancelled;
pub(crate) mod claim;
pub(crate) mod claims;
pub(crate) mod dead_entries;
pub(crate) mod dead_letter;
pub(crate) mod del_if_keys;
pub(crate) mod depths;
pub(crate) mod enqueue;
pub(crate) mod fetch_payloads;
pub(crate) mod is_terminal;
pub(crate) mod list_len;
#[cfg(feature = "test-support")]
pub(crate) mod list_ttl;
pub(crate) mod now;
pub(crate) mod park_retry;
pub(crate) mod paused;
pub(crate) mod peek;
pub(crate) mod per_request;
pub(crate) mod ping;
pub(crate) mod promote;
pub(crate) mod promote_tagged;
pub(crate) mod purge_dead;
pub(crate) mod push_once;
pub(crate) mod reclaim;
pub(crate) mod reclaim_tagged;
pub(crate) mod redrive_dead;
pub(crate) mod release;
pub(crate) mod release_claim;
pub(crate) mod renew;
pub(crate) mod repair_index;
#[cfg(feature = "test-support")]
pub(crate) mod results;
pub(crate) mod retry_depth;
pub(crate) mod retry_entries;
pub(crate) mod retry_sets;
pub(crate) mod set_paused;
pub(crate) mod submit;

use self::call::Call;
use crate::codec::{flag, per_item};
use crate::store::{MAX_BATCH, RedisStore};
use claim_core::{Generation, Op, OwnerToken, StoreError};
use redis::{Cmd, Script};

/// `EVALSHA <sha> <keys>`, ready for the keys and then the arguments: the
/// hot path (claim, renew, ack) writes its arguments straight into one
/// command buffer (see docs/PERFORMANCE.md).
pub(crate) fn evalsha(script: &Script, keys: usize, args: usize, bytes: usize) -> Cmd {
    let mut cmd = Cmd::with_capacity(3 + keys + args, 64 + bytes);
    cmd.arg("EVALSHA").arg(script.get_hash()).arg(keys);
    cmd
}

/// Runs `script` once per [`MAX_BATCH`] items with `keys`, then each
/// item's terminal marker key (`marker_for` with the pending key: the
/// marker, or in the hash-tagged layout its copy in the queue's slot), the
/// owner token, the time, each item's arguments (written by `args`) and,
/// hash-tagged, each item's marker value read first ([`answered`]); reads
/// one 0/1 flag per item: the shape of `release` and
/// `park_retry`. `generation` and `member` (when the caller has it) say
/// whose marker.
pub(crate) async fn owner_flags<T>(
    store: &RedisStore,
    (op, script): (Op, &Script),
    (queue, keys): (&str, &[&str]),
    owner: &OwnerToken,
    items: &[T],
    (generation, member): (impl Fn(&T) -> &Generation, impl Fn(&T) -> Option<&[u8]>),
    args: impl Fn(&mut Call<'_>, &T),
) -> Result<Vec<bool>, StoreError> {
    let pending = store.keys().queue(queue).pending;
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(MAX_BATCH) {
        let gens: Vec<&Generation> = chunk.iter().map(&generation).collect();
        let markers = if store.keys().tagged() {
            let members: Option<Vec<Vec<u8>>> = chunk
                .iter()
                .map(|i| member(i).map(<[u8]>::to_vec))
                .collect();
            answered::claimed_markers(store, op, queue, &gens, members).await?
        } else {
            Vec::new()
        };
        let mut call = Call::new(store, script);
        for key in keys {
            call.key(*key);
        }
        for g in &gens {
            call.key(store.keys().marker_for(&pending, g));
        }
        call.arg(owner.as_str()).arg(store.time_arg());
        for item in chunk {
            args(&mut call, item);
        }
        for marker in &markers {
            call.arg(marker.as_str());
        }
        let reply: Vec<i64> = call.run(store, op).await?;
        out.extend(per_item(op, reply, chunk.len())?.into_iter().map(flag));
    }
    Ok(out)
}
