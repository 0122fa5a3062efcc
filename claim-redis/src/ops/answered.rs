//! Hash-tagged layout: the terminal markers of claimed generations, read before a script that must not return an answered generation to pending (release, sweep, admin release, retry parking).
//!
//! Those scripts run in the queue's slot and read the queue-slot copy of
//! each marker themselves (`marker_for` with the pending key, in KEYS).
//! The marker itself lies in its result list's slot, and the copy is
//! missing inside the split ack's crash window and for a record the
//! reclaimer pushed; so the candidates
//! ([`per_request::marker_candidates`], from the claimed member's
//! routing) are read first, per slot, and passed in as values. A marker
//! written between this read and the script is missed: the copy goes back
//! to pending (or the retry set), where the claim script drops it as
//! answered (promotion too), or its holder's record is suppressed by the
//! marker: never a second record.

use super::per_request;
use crate::conn::{Effect, bad_reply};
use crate::store::RedisStore;
use claim_core::{Generation, Op, StoreError, wire};

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
            per_request::marker_candidates(store, queue, parsed.as_ref(), g)
        })
        .collect();
    let markers = per_request::markers(store, op, &candidates).await?;
    Ok(markers.into_iter().map(Option::unwrap_or_default).collect())
}
