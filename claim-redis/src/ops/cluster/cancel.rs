//! `cancel` in the hash-tagged layout, as Go's cluster producer: the active token read, then written as the cancel marker, two keys in two slots.

use super::request_keys;
use crate::conn::Effect;
use crate::state::RedisStore;
use claim_core::{Op, StoreError};

/// As Go's cluster producer: GET `request-active:<id>`
/// (and, in explicit-time mode, its logical expiry), then SET
/// `request-cancel:<id>` to that token: two keys in two slots, two steps.
///
/// Correctness of the split: a resubmission landing between the two
/// (it deletes the cancel key and sets a new token) is not cancelled: the
/// marker written holds the old token, which the new generation does not
/// carry, so a cancel still never lands on a generation it did not read.
/// A crash between the steps writes nothing.
pub(crate) async fn cancel(store: &RedisStore, id: &str, ttl: u64) -> Result<bool, StoreError> {
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
