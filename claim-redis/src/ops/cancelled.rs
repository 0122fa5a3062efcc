//! `cancelled`: reads the generations' cancel markers (and their logical expiries) in one round trip.

use super::cluster::request_keys;
use crate::conn::Effect;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::{Generation, Op, StoreError};

/// Whether each generation's cancel marker holds its token (as the claim
/// script decides `cancelled`), read in one round trip.
pub(crate) async fn cancelled(
    store: &RedisStore,
    generations: &[Generation],
) -> Result<Vec<bool>, StoreError> {
    if generations.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<String> = generations
        .iter()
        .map(|g| store.keys().cancel(&g.id))
        .collect();
    let (tokens, expiries) = match store.layout() {
        KeyLayout::Plain => plain_reads(store, &keys).await?,
        // Cancel keys lie in slots of their own: per-slot reads.
        KeyLayout::HashTagged => {
            request_keys::values_and_expiries(store, Op::Cancelled, &keys).await?
        }
    };
    Ok(answer(generations, tokens, expiries, store.explicit_now()))
}

/// The cancel markers and (explicit time) their logical expiries, in one
/// MULTI.
async fn plain_reads(
    store: &RedisStore,
    keys: &[String],
) -> Result<(Vec<Option<Vec<u8>>>, Vec<Option<u64>>), StoreError> {
    let mut pipe = redis::pipe();
    pipe.atomic().cmd("MGET").arg(keys);
    let now = store.explicit_now();
    if now.is_some() {
        pipe.cmd("HMGET").arg(store.keys().clock_side()).arg(keys);
    } else {
        pipe.cmd("PING");
    }
    let (tokens, expiries): (Vec<Option<Vec<u8>>>, redis::Value) = store
        .conn()
        .query(Op::Cancelled, Effect::Read, &pipe)
        .await?;
    let expiries: Vec<Option<u64>> = match now {
        Some(_) => redis::from_redis_value(expiries)
            .map_err(|e| crate::conn::bad_reply(Op::Cancelled, Effect::Read, e))?,
        None => Vec::new(),
    };
    Ok((tokens, expiries))
}

/// Whether each generation's cancel marker holds its token and, in
/// explicit-time mode, is still live.
fn answer(
    generations: &[Generation],
    tokens: Vec<Option<Vec<u8>>>,
    expiries: Vec<Option<u64>>,
    now: Option<claim_core::Millis>,
) -> Vec<bool> {
    generations
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let holds = tokens.get(i).and_then(|t| t.as_deref()) == Some(g.token.as_bytes());
            let live = match (now, expiries.get(i).copied().flatten()) {
                (Some(now), Some(expiry)) => expiry > now.0,
                _ => true,
            };
            holds && live
        })
        .collect()
}
