//! What a producer cancels and what the worker reads of a producer's keys: `cancel` runs `lua/cancel.lua`, as the Go producer cancels (hash-tagged, as Go's cluster producer: two keys in two slots, two steps); `cancelled` reads the cancel markers and `fetch_payloads` the payloads stored apart, with their logical expiries in explicit-time mode.

use super::call::Call;
use super::cluster::request_keys;
use crate::codec::flag;
use crate::conn::{Effect, bad_reply};
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::{Generation, Op, Payload, StoreError, wire};

/// As Go: the active token, if any, becomes the cancel marker for 7 days.
pub(crate) async fn cancel(store: &RedisStore, id: &str) -> Result<bool, StoreError> {
    let ttl = wire::CANCEL_MARKER_TTL_SECS * 1000;
    if store.layout() == KeyLayout::HashTagged {
        return tagged_cancel(store, id, ttl).await;
    }
    // One script call on the active key, the cancel key and the side hash.
    let keys = store.keys();
    let mut call = Call::new(store, &store.scripts().cancel);
    call.key(keys.active(id))
        .key(keys.cancel(id))
        .key(keys.clock_side());
    call.arg(store.time_arg())
        .arg(store.real_ttl(ttl))
        .arg(store.producer_now().plus(ttl).0);
    Ok(flag(call.run(store, Op::Cancel).await?))
}

/// Hash-tagged, as Go's cluster producer: GET `request-active:<id>`
/// (and, in explicit-time mode, its logical expiry), then SET
/// `request-cancel:<id>` to that token: two keys in two slots, two steps.
///
/// Correctness of the split: a resubmission landing between the two
/// (it deletes the cancel key and sets a new token) is not cancelled: the
/// marker written holds the old token, which the new generation does not
/// carry, so a cancel still never lands on a generation it did not read.
/// A crash between the steps writes nothing.
async fn tagged_cancel(store: &RedisStore, id: &str, ttl: u64) -> Result<bool, StoreError> {
    let keys = store.keys();
    let (active, cancel) = (keys.active(id), keys.cancel(id));
    let token: Option<Vec<u8>> = store
        .conn()
        .query(Op::Cancel, Effect::Read, &redis::Cmd::get(&active))
        .await?;
    let Some(token) = token else {
        return Ok(false);
    };
    let explicit = store.explicit_now();
    if let Some(now) = explicit {
        let expiry = request_keys::side_expiries(store, Op::Cancel, &[active]).await?;
        if expiry[0].is_some_and(|e| e <= now.0) {
            return Ok(false);
        }
    }
    let mut pipe = redis::pipe();
    pipe.cmd("SET")
        .arg(&cancel)
        .arg(token)
        .arg("PX")
        .arg(store.real_ttl(ttl))
        .ignore();
    if explicit.is_some() {
        pipe.hset(
            keys.clock_side_for(&cancel),
            &cancel,
            store.producer_now().plus(ttl).0,
        )
        .ignore();
    }
    store
        .conn()
        .query::<()>(Op::Cancel, Effect::Transaction, &pipe)
        .await?;
    Ok(true)
}

/// Whether each generation's cancel marker holds its token (as the claim
/// script decides `cancelled`) and is live, read in one round trip.
pub(crate) async fn cancelled(
    store: &RedisStore,
    generations: &[Generation],
) -> Result<Vec<bool>, StoreError> {
    let keys: Vec<String> = generations
        .iter()
        .map(|g| store.keys().cancel(&g.id))
        .collect();
    let tokens = live_values(store, Op::Cancelled, &keys).await?;
    let holds =
        |(g, token): (&Generation, Option<Vec<u8>>)| token.as_deref() == Some(g.token.as_bytes());
    Ok(generations.iter().zip(tokens).map(holds).collect())
}

/// The payloads stored apart at the (prefixed) payload keys of `refs`, in
/// order; `None` where missing.
pub(crate) async fn fetch_payloads(
    store: &RedisStore,
    refs: &[String],
) -> Result<Vec<Option<Payload>>, StoreError> {
    let keys: Vec<String> = refs.iter().map(|r| store.keys().payload(r)).collect();
    let values = live_values(store, Op::FetchPayloads, &keys).await?;
    Ok(values.into_iter().map(|v| v.map(Payload::from)).collect())
}

/// The values at `keys`, in order, each `None` where missing or, with an
/// explicit clock, past its logical expiry on that clock (kept beside it:
/// Redis expires on its own clock). Plain layout: one MGET, or one MULTI
/// with the side hash; hash-tagged: per-slot reads, the keys lying in
/// slots of their own.
async fn live_values(
    store: &RedisStore,
    op: Op,
    keys: &[String],
) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let now = store.explicit_now();
    let (values, expiries): (Vec<Option<Vec<u8>>>, Vec<Option<u64>>) = match (store.layout(), now) {
        (KeyLayout::HashTagged, None) => (request_keys::mget(store, op, keys).await?, Vec::new()),
        (KeyLayout::HashTagged, Some(_)) => (
            request_keys::mget(store, op, keys).await?,
            request_keys::side_expiries(store, op, keys).await?,
        ),
        (KeyLayout::Plain, None) => {
            let mget = redis::cmd("MGET").arg(keys).to_owned();
            (
                store.conn().query(op, Effect::Read, &mget).await?,
                Vec::new(),
            )
        }
        (KeyLayout::Plain, Some(_)) => {
            let mut pipe = redis::pipe();
            pipe.atomic().cmd("MGET").arg(keys);
            pipe.cmd("HMGET").arg(store.keys().clock_side()).arg(keys);
            store.conn().query(op, Effect::Read, &pipe).await?
        }
    };
    if values.len() != keys.len() {
        let what = format!(
            "MGET of {} keys answered {} values",
            keys.len(),
            values.len()
        );
        return Err(bad_reply(op, Effect::Read, what));
    }
    let live = |i: usize| match (now, expiries.get(i).copied().flatten()) {
        (Some(now), Some(expiry)) => expiry > now.0,
        _ => true,
    };
    Ok(values
        .into_iter()
        .enumerate()
        .map(|(i, v)| v.filter(|_| live(i)))
        .collect())
}
