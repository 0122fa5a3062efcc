//! `fetch_payloads`: reads the payloads stored apart for a batch, one MGET (with their logical expiries in explicit-time mode).

use super::per_request;
use crate::conn::Effect;
use crate::store::RedisStore;
use claim_core::{Member, Millis, Op, StoreError};

/// The values at the (prefixed) payload keys, in order; `None` where missing.
pub(crate) async fn fetch_payloads(
    store: &RedisStore,
    refs: &[String],
) -> Result<Vec<Option<Member>>, StoreError> {
    if refs.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<String> = refs.iter().map(|r| store.keys().payload(r)).collect();
    if store.keys().tagged() {
        // Payload keys lie in slots of their own: per-slot reads.
        let op = Op::FetchPayloads;
        let values = per_request::mget(store, op, &keys).await?;
        let now = store.explicit_now();
        let expiries = match now {
            Some(_) => per_request::side_expiries(store, op, &keys).await?,
            None => Vec::new(),
        };
        return answer(refs, values, expiries, now);
    }
    let Some(now) = store.explicit_now() else {
        let mget = redis::cmd("MGET").arg(&keys).to_owned();
        let values = store
            .conn()
            .query(Op::FetchPayloads, Effect::Read, &mget)
            .await?;
        return answer(refs, values, Vec::new(), None);
    };
    // Explicit time: a key lives until its logical expiry on the store's
    // clock, kept beside it (Redis expires on its own clock).
    let mut pipe = redis::pipe();
    pipe.atomic().cmd("MGET").arg(&keys);
    pipe.cmd("HMGET").arg(store.keys().clock_side()).arg(&keys);
    let (values, expiries): (Vec<Option<Vec<u8>>>, Vec<Option<u64>>) = store
        .conn()
        .query(Op::FetchPayloads, Effect::Read, &pipe)
        .await?;
    answer(refs, values, expiries, Some(now))
}

/// The values, each only while its logical expiry (explicit time) is ahead.
fn answer(
    refs: &[String],
    values: Vec<Option<Vec<u8>>>,
    expiries: Vec<Option<u64>>,
    now: Option<Millis>,
) -> Result<Vec<Option<Member>>, StoreError> {
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
            v.filter(|_| live).map(Member::from)
        })
        .collect())
}
