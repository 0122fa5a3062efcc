//! `fetch_payloads`: reads the payloads stored apart for a batch, one MGET (with their logical expiries in explicit-time mode).

use super::cluster::request_keys;
use crate::conn::Effect;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::{Millis, Op, Payload, StoreError};

/// The values at the (prefixed) payload keys, in order; `None` where missing.
pub(crate) async fn fetch_payloads(
    store: &RedisStore,
    refs: &[String],
) -> Result<Vec<Option<Payload>>, StoreError> {
    if refs.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<String> = refs.iter().map(|r| store.keys().payload(r)).collect();
    let (values, expiries) = match store.layout() {
        KeyLayout::Plain => plain_reads(store, &keys).await?,
        // Payload keys lie in slots of their own: per-slot reads.
        KeyLayout::HashTagged => {
            request_keys::values_and_expiries(store, Op::FetchPayloads, &keys).await?
        }
    };
    answer(refs, values, expiries, store.explicit_now())
}

/// The payloads and (explicit time) their logical expiries: one MGET, or
/// one MULTI with the side hash.
async fn plain_reads(
    store: &RedisStore,
    keys: &[String],
) -> Result<(Vec<Option<Vec<u8>>>, Vec<Option<u64>>), StoreError> {
    if store.explicit_now().is_none() {
        let mget = redis::cmd("MGET").arg(keys).to_owned();
        let values = store
            .conn()
            .query(Op::FetchPayloads, Effect::Read, &mget)
            .await?;
        return Ok((values, Vec::new()));
    }
    // Explicit time: a key lives until its logical expiry on the store's
    // clock, kept beside it (Redis expires on its own clock).
    let mut pipe = redis::pipe();
    pipe.atomic().cmd("MGET").arg(keys);
    pipe.cmd("HMGET").arg(store.keys().clock_side()).arg(keys);
    let (values, expiries): (Vec<Option<Vec<u8>>>, Vec<Option<u64>>) = store
        .conn()
        .query(Op::FetchPayloads, Effect::Read, &pipe)
        .await?;
    Ok((values, expiries))
}

/// The values, each only while its logical expiry (explicit time) is ahead.
fn answer(
    refs: &[String],
    values: Vec<Option<Vec<u8>>>,
    expiries: Vec<Option<u64>>,
    now: Option<Millis>,
) -> Result<Vec<Option<Payload>>, StoreError> {
    if values.len() != refs.len() {
        return Err(crate::conn::bad_reply(
            Op::FetchPayloads,
            Effect::Read,
            format!(
                "MGET of {} keys answered {} values",
                refs.len(),
                values.len()
            ),
        ));
    }
    Ok(values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            let live = match (now, expiries.get(i).copied().flatten()) {
                (Some(now), Some(expiry)) => expiry > now.0,
                _ => true,
            };
            v.filter(|_| live).map(Payload::from)
        })
        .collect())
}
