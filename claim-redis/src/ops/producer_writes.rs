//! The producer's per-request writes (`request-cancel:`, `request-active:`, the payload stored apart) and their expiries, as Go's producer writes them: `submit` and `enqueue` write them in both layouts.

use crate::state::RedisStore;
use claim_core::store::Submission;
use claim_core::{Millis, Score, wire};

/// A producer key never lives less than this (the model's floor).
const MIN_ACTIVE_MS: u64 = 1000;

/// A deadline as the producer keys' expiries use it: at most
/// [`wire::MAX_DEADLINE_SECS`], so a PX computed from it stays valid (a
/// failing `SET … PX` inside the MULTI would leave the ZADD landed without
/// its producer keys).
fn key_deadline(deadline: i64) -> i64 {
    deadline.min(wire::MAX_DEADLINE_SECS)
}

/// The active key's logical expiry (the deadline, at least 1 s away) and its PX.
pub(crate) fn active_expiry(store: &RedisStore, now: Millis, deadline: i64) -> (Millis, u64) {
    let expiry = Score(key_deadline(deadline) as f64)
        .as_millis()
        .max(now.plus(MIN_ACTIVE_MS));
    (expiry, store.real_ttl(now.until(expiry)))
}

/// A stored payload's logical expiry (the deadline plus
/// [`wire::PAYLOAD_GRACE_MS`], at least 1 ms away) and its PX.
pub(crate) fn payload_expiry(store: &RedisStore, now: Millis, deadline: i64) -> (Millis, u64) {
    let expiry = Score(key_deadline(deadline) as f64)
        .as_millis()
        .plus(wire::PAYLOAD_GRACE_MS)
        .max(now.plus(1));
    (expiry, store.real_ttl(now.until(expiry)))
}

/// The producer's per-request writes, added to `pipe`: DEL
/// `request-cancel:<id>`, SET `request-active:<id>` to the token until the
/// deadline (at least 1 s), SET the payload stored apart when there is
/// one; in explicit-time mode their logical expiries in the side hash of
/// each key's slot. Each command names one key, so the pipeline may be
/// split by slot (hash-tagged layout) or sent as one MULTI (plain).
pub(crate) fn producer_writes(store: &RedisStore, s: &Submission, pipe: &mut redis::Pipeline) {
    let keys = store.keys();
    let id = &s.generation.id;
    let (active, cancel) = (keys.active(id), keys.cancel(id));
    let now = store.producer_now();
    let (expiry, ttl) = active_expiry(store, now, s.deadline);
    pipe.del(&cancel)
        .ignore()
        .cmd("SET")
        .arg(&active)
        .arg(&s.generation.token)
        .arg("PX")
        .arg(ttl)
        .ignore();
    // The payload's key and expiry only when there is one (reading the
    // key's name parses the member).
    let stored = s.payload.as_ref().map(|payload| {
        let key = keys.payload(&s.payload_key());
        (payload, key, payload_expiry(store, now, s.deadline))
    });
    if let Some((payload, key, (_, ttl))) = &stored {
        pipe.cmd("SET")
            .arg(key)
            .arg(payload.as_bytes())
            .arg("PX")
            .arg(*ttl)
            .ignore();
    }
    if store.explicit_now().is_some() {
        pipe.hdel(keys.clock_side_for(&cancel), &cancel)
            .ignore()
            .hset(keys.clock_side_for(&active), &active, expiry.0)
            .ignore();
        if let Some((_, key, (expiry, _))) = &stored {
            pipe.hset(keys.clock_side_for(key), key, expiry.0).ignore();
        }
    }
}
