//! Owner-checked ends of claims: `release` (and the runtime's shutdown sweep) runs `lua/release.lua`, returning the claims `owner` holds to pending; `release_claim` runs `lua/release_claim.lua`, an operator ending one claim whoever holds it; the call shape release and `park_retry` share (an owner-checked script per [`MAX_BATCH`] items answering one code per item: 0 not held, 1 ended, 3 ended as answered). An answered generation's claim is dropped, not returned.
//!
//! Hash-tagged layout: the terminal markers of claimed generations are
//! read before these scripts, which must not return an answered
//! generation to pending. The scripts run in the queue's slot and read the
//! queue-slot copy of each marker themselves (`marker_for` with the pending
//! key, in KEYS).
//! The marker itself lies in its result list's slot, and the copy is
//! missing inside the split ack's crash window and for a record the
//! reclaimer pushed; so the candidates
//! ([`request_keys::marker_candidates`], from the claimed member's
//! routing) are read first (one call per node, per slot what a node
//! refuses) and passed in as values. A marker
//! written between this read and the script is missed: the copy goes back
//! to pending (or the retry set), where the claim script drops it as
//! answered (promotion too), or its holder's record is suppressed by the
//! marker: never a second record.

use super::call::Call;
use super::cluster::request_keys;
use crate::codec::per_item;
use crate::conn::{Effect, bad_reply};
use crate::keys::KeyLayout;
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::{Generation, Op, OwnerToken, StoreError, wire};
use redis::Script;

/// Returns the claims `owner` holds to pending (the runtime's shutdown
/// sweep is this too).
pub(crate) async fn release(
    store: &RedisStore,
    queue: &str,
    owner: &OwnerToken,
    generations: &[Generation],
) -> Result<Vec<bool>, StoreError> {
    let q = store.keys().queue(queue);
    let keys: [&str; 5] = [&q.pending, &q.claimed, &q.owners, &q.index, &q.deliveries];
    let release = OwnerScript {
        op: Op::Release,
        script: &store.scripts().release,
        queue,
        keys: &keys,
        generation: |g: &Generation| g,
        args: |call, g| {
            call.arg(g.claim_key());
        },
    };
    release.run(store, owner, generations, |_| None).await
}

/// An operator ends one generation's claim now, whoever holds it
/// (`lua/release_claim.lua`); answers the owner it had.
pub(crate) async fn release_claim(
    store: &RedisStore,
    queue: &str,
    generation: &Generation,
) -> Result<Option<OwnerToken>, StoreError> {
    let keys = store.keys();
    let q = keys.queue(queue);
    // Hash-tagged: the marker value to decide by, read from the slots it
    // may lie in (plain: the script reads the marker in KEYS itself).
    let marker = match store.layout() {
        KeyLayout::Plain => None,
        KeyLayout::HashTagged => {
            let gens = [generation];
            let values = claimed_markers(store, Op::ReleaseClaim, queue, &gens, None).await?;
            values.into_iter().next()
        }
    };
    let mut call = Call::new(store, &store.scripts().release_claim);
    for key in [&q.pending, &q.claimed, &q.owners, &q.index, &q.deliveries] {
        call.key(key);
    }
    call.key(keys.marker_for(&q.pending, generation));
    let payload = keys.payload(&wire::payload_key(&generation.id, &generation.token));
    if marker.is_none() {
        call.key(&payload).key(keys.clock_side());
    }
    call.arg(generation.claim_key()).arg(store.time_arg());
    if let Some(marker) = &marker {
        call.arg(marker.as_str());
    }
    let ended: Option<(String, i64)> = call.run(store, Op::ReleaseClaim).await?;
    let answered = ended.as_ref().is_some_and(|(_, answered)| *answered == 1);
    if answered && marker.is_some() {
        // Hash-tagged: the payload key lies in its own slot.
        forget_payloads(store, Op::ReleaseClaim, std::iter::once(generation)).await;
    }
    tracing::info!(queue, id = %generation.id, released = ended.is_some(), answered, "claim released by an operator");
    Ok(ended.map(|(owner, _)| OwnerToken::new(owner)))
}

/// An item's code: the caller's claim ended, dropped because its
/// generation was answered (a stale owner's ack landed first). The plain
/// scripts delete its payload key themselves; in the hash-tagged layout
/// the key lies in another slot and the caller deletes it.
const ENDED_ANSWERED: i64 = 3;

/// One owner-checked script and how its items are written: `keys`, then
/// each item's terminal marker key (`marker_for` with the pending key: the
/// marker, or in the hash-tagged layout its copy in the queue's slot),
/// in the plain layout each item's payload key and the explicit-time side
/// hash, the owner token, the time, each item's arguments (written by
/// `args`) and the marker values the caller read first (hash-tagged; none
/// in the plain layout).
pub(crate) struct OwnerScript<'a, T> {
    /// Named in errors.
    pub op: Op,
    pub script: &'a Script,
    pub queue: &'a str,
    /// The script's leading KEYS, in its header's order.
    pub keys: &'a [&'a str],
    /// Whose marker an item's is.
    pub generation: fn(&T) -> &Generation,
    /// Writes one item's ARGV.
    pub args: fn(&mut Call<'_>, &T),
}

impl<T: Sync> OwnerScript<'_, T> {
    /// Runs the script on `items`, one call per [`MAX_BATCH`]: whether each
    /// item's claim ended. Hash-tagged: each chunk's marker values are read
    /// first ([`claimed_markers`]; `member` gives an item's claimed member
    /// when the caller has it, parking, else the members are read from the
    /// claimed hash), and the payload keys of the generations whose claims
    /// ended answered are deleted after.
    pub(crate) async fn run(
        &self,
        store: &RedisStore,
        owner: &OwnerToken,
        items: &[T],
        member: fn(&T) -> Option<&[u8]>,
    ) -> Result<Vec<bool>, StoreError> {
        let keys = store.keys();
        let pending = keys.queue(self.queue).pending;
        let plain = store.layout() == KeyLayout::Plain;
        let mut out = Vec::with_capacity(items.len());
        for chunk in items.chunks(MAX_BATCH) {
            let gens: Vec<&Generation> = chunk.iter().map(self.generation).collect();
            let markers = match plain {
                true => Vec::new(),
                false => {
                    let members = chunk.iter().map(|i| member(i).map(<[u8]>::to_vec));
                    claimed_markers(store, self.op, self.queue, &gens, members.collect()).await?
                }
            };
            let mut call = Call::new(store, self.script);
            for key in self.keys {
                call.key(*key);
            }
            for g in &gens {
                call.key(keys.marker_for(&pending, g));
            }
            if plain {
                for g in &gens {
                    call.key(keys.payload(&wire::payload_key(&g.id, &g.token)));
                }
                call.key(keys.clock_side());
            }
            call.arg(owner.as_str()).arg(store.time_arg());
            for item in chunk {
                (self.args)(&mut call, item);
            }
            for marker in &markers {
                call.arg(marker.as_str());
            }
            let reply: Vec<i64> = call.run(store, self.op).await?;
            let codes = per_item(self.op, reply, chunk.len())?;
            if !plain {
                let answered = gens
                    .iter()
                    .zip(&codes)
                    .filter(|(_, c)| **c == ENDED_ANSWERED);
                forget_payloads(store, self.op, answered.map(|(g, _)| *g)).await;
            }
            // Any code but 0 (not held) says the claim ended.
            out.extend(codes.into_iter().map(|code| code != 0));
        }
        Ok(out)
    }
}

/// Deletes the payload keys of generations whose claims ended dropped as
/// answered: a stale owner's ack left them to the holder, which ended its
/// claim without an ack. Each lies in its own slot, so after the script;
/// what a failure leaves expires on its own (ten minutes after the
/// deadline).
pub(crate) async fn forget_payloads<'g>(
    store: &RedisStore,
    op: Op,
    answered: impl Iterator<Item = &'g Generation>,
) {
    let keys = store.keys();
    let targets: Vec<(String, String)> = answered
        .map(|g| {
            (
                keys.payload(&wire::payload_key(&g.id, &g.token)),
                String::new(),
            )
        })
        .collect();
    if !targets.is_empty() {
        request_keys::delete(store, op, targets).await;
    }
}

/// Per generation, the marker value to decide by (`""` when none), read
/// from its candidate keys; `members` are the claimed members when the
/// caller has them (parking), else they are read from the claimed hash.
pub(crate) async fn claimed_markers(
    store: &RedisStore,
    op: Op,
    queue: &str,
    generations: &[&Generation],
    members: Option<Vec<Vec<u8>>>,
) -> Result<Vec<String>, StoreError> {
    let members: Vec<Option<Vec<u8>>> = match members {
        Some(known) => known.into_iter().map(Some).collect(),
        None => {
            let q = store.keys().queue(queue);
            let mut cmd = redis::cmd("HMGET");
            cmd.arg(&q.claimed);
            for g in generations {
                cmd.arg(g.claim_key());
            }
            let got: Vec<Option<Vec<u8>>> = store.conn().query(op, Effect::Read, &cmd).await?;
            if got.len() != generations.len() {
                return Err(bad_reply(op, Effect::Read, format!("HMGET: {got:?}")));
            }
            got
        }
    };
    let candidates: Vec<Vec<String>> = generations
        .iter()
        .zip(&members)
        .map(|(g, member)| {
            let parsed = member.as_deref().and_then(|m| wire::parse_member(m).ok());
            request_keys::marker_candidates(store, queue, parsed.as_ref(), g)
        })
        .collect();
    let markers = request_keys::markers(store, op, &candidates).await?;
    Ok(markers.into_iter().map(Option::unwrap_or_default).collect())
}
