//! Hash-tagged layout: the terminal markers of claimed generations, read before a script that must not return an answered generation to pending (release, sweep, admin release, retry parking), and the owner-checked loop of release, sweep and parking that passes them in.
//!
//! Those scripts run in the queue's slot and read the queue-slot copy of
//! each marker themselves (`marker_for` with the pending key, in KEYS).
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

use super::request_keys;
use crate::conn::{Effect, bad_reply};
use crate::ops::owner_flags::{ENDED_ANSWERED, OwnerScript, ended};
use crate::state::{MAX_BATCH, RedisStore};
use claim_core::{Generation, Op, OwnerToken, StoreError, wire};

/// Runs `script` (release, sweep, parking) per [`MAX_BATCH`] items, each
/// chunk's marker values read first ([`claimed_markers`]); `member` gives
/// an item's claimed member when the caller has it (parking), else the
/// members are read from the claimed hash.
pub(crate) async fn owner_flags<T: Sync>(
    store: &RedisStore,
    script: &OwnerScript<'_, T>,
    owner: &OwnerToken,
    items: &[T],
    member: fn(&T) -> Option<&[u8]>,
) -> Result<Vec<bool>, StoreError> {
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(MAX_BATCH) {
        let gens: Vec<&Generation> = chunk.iter().map(script.generation).collect();
        let members: Option<Vec<Vec<u8>>> = chunk
            .iter()
            .map(|i| member(i).map(<[u8]>::to_vec))
            .collect();
        let markers = claimed_markers(store, script.op, script.queue, &gens, members).await?;
        let codes = script.run_chunk(store, owner, chunk, &markers).await?;
        let answered = gens
            .iter()
            .zip(&codes)
            .filter(|(_, c)| **c == ENDED_ANSWERED);
        forget_payloads(store, script.op, answered.map(|(g, _)| *g)).await;
        out.extend(codes.into_iter().map(ended));
    }
    Ok(out)
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
