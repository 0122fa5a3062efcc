//! `claim` in the hash-tagged layout: the per-request keys (markers, `request-cancel:`) read first (one call per node, per slot what a node refuses: `cluster::request_keys`), then `lua/claim.lua` on the queue's keys alone, in the queue's slot.

use super::cluster::request_keys;
use crate::state::RedisStore;
use claim_core::store::ClaimRequest;
use claim_core::{Op, StoreError, wire};

/// What a claim in the hash-tagged layout reads first: the per-request
/// keys (each item's marker, in its result list's slot, and
/// `request-cancel:<id>`), one call per node ([`request_keys`]), as the
/// arguments `lua/claim.lua` takes after the others, in blocks (each
/// item's marker value, then its cancel token, then why a key of its is
/// no string, each `""` for none); the script then runs on the queue's
/// keys alone, in the queue's slot.
///
/// Correctness of the split: the reads are not atomic with the script. A
/// marker written in between (an ack of this generation) is missed: the
/// copy is claimed as if unanswered, and the holder's ack is suppressed
/// by the marker (the push is marker-checked in the list's slot), so no
/// second record; a marker expiring in between only suppresses a copy a
/// moment early, as a claim a moment earlier would. A cancel written in
/// between is missed by this claim and seen by the holder's next
/// `cancelled` check, as a cancel right after a claim is. Nothing is
/// written before the script, so a crash between the reads and the script
/// changes nothing.
pub(crate) async fn read_first(
    store: &RedisStore,
    queue: &str,
    chunk: &[ClaimRequest],
) -> Result<Vec<Vec<u8>>, StoreError> {
    let keys = store.keys();
    let n = chunk.len();
    // Per item: its cancel key, then its marker's candidate keys.
    let mut per_item: Vec<String> = Vec::with_capacity(3 * n);
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(n);
    for item in chunk {
        let parsed = wire::parse_member(item.member.as_bytes()).ok();
        let start = per_item.len();
        per_item.push(keys.cancel(&item.generation.id));
        per_item.extend(request_keys::marker_candidates(
            store,
            queue,
            parsed.as_ref(),
            &item.generation,
        ));
        spans.push((start, per_item.len()));
    }
    let (values, kinds) = request_keys::strings(store, Op::Claim, &per_item, true).await?;
    let cancels: Vec<String> = spans.iter().map(|&(s, _)| per_item[s].clone()).collect();
    let live = match store.explicit_now() {
        None => vec![true; n],
        Some(now) => request_keys::side_expiries(store, Op::Claim, &cancels)
            .await?
            .into_iter()
            .map(|expiry| expiry.is_none_or(|e| e > now.0))
            .collect(),
    };
    let mut args: Vec<Vec<u8>> = Vec::with_capacity(3 * n);
    for &(start, end) in &spans {
        let marker = request_keys::best_marker(store, &values[start + 1..end]);
        args.push(marker.unwrap_or_default().into_bytes());
    }
    for (i, &(start, _)) in spans.iter().enumerate() {
        let cancel = values[start].as_deref().filter(|_| live[i]);
        args.push(cancel.unwrap_or_default().to_vec());
    }
    for &(start, end) in &spans {
        // As claim.lua words it for the plain layout: the key without the prefix.
        let why = (start..end).find_map(|j| {
            let kind = kinds[j].as_deref()?;
            let key = &per_item[j][keys.prefix().len()..];
            Some(format!("key \"{key}\" holds a {kind}, not a string"))
        });
        args.push(why.unwrap_or_default().into_bytes());
    }
    Ok(args)
}
