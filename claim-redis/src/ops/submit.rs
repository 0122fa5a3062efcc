//! `submit`: enqueues the member bytes as given, as the Go producer does, in one MULTI.

use crate::conn::Effect;
use crate::store::RedisStore;
use claim_core::store::Submission;
use claim_core::{Millis, Op, Score, StoreError, wire};

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

/// One MULTI, as Go: DEL `request-cancel:<id>`, SET `request-active:<id>`
/// to the token until the deadline (at least 1 s), SET the payload stored
/// apart when there is one, ZADD the member at its score.
pub(crate) async fn submit(
    store: &RedisStore,
    queue: &str,
    s: &Submission,
) -> Result<(), StoreError> {
    let keys = store.keys();
    if keys.tagged() {
        producer_keys(store, Op::Submit, s).await?;
        let zadd = redis::Cmd::zadd(keys.queue(queue).pending, s.member.as_bytes(), s.score().0);
        return store.conn().query(Op::Submit, Effect::Write, &zadd).await;
    }
    let mut pipe = redis::pipe();
    pipe.atomic();
    producer_writes(store, s, &mut pipe);
    pipe.zadd(keys.queue(queue).pending, s.member.as_bytes(), s.score().0)
        .ignore();
    store
        .conn()
        .query::<()>(Op::Submit, Effect::Transaction, &pipe)
        .await
}

/// Hash-tagged layout, Go's cluster order: the per-request keys first,
/// each a single-key command in its own slot (DEL `request-cancel:<id>`,
/// SET `request-active:<id>`, SET the payload stored apart; in
/// explicit-time mode their logical expiries in their slots' side
/// hashes), before the caller's one command or script on the queue's slot
/// adds the member.
///
/// Correctness of the split: the member is added only after these writes
/// landed, so no claim ever sees a member whose active key or payload is
/// missing. A crash (or an error) after them and before the member is
/// added leaves an active key (and a payload) for a request that was never
/// accepted: the producer saw an error, no claim can find it, and both
/// keys expire on their own (the deadline, plus ten minutes for the
/// payload); a cancel of it marks a token no member carries. Repeating
/// the submit rewrites the same values.
pub(crate) async fn producer_keys(
    store: &RedisStore,
    op: Op,
    s: &Submission,
) -> Result<(), StoreError> {
    let mut pipe = redis::pipe();
    producer_writes(store, s, &mut pipe);
    store
        .conn()
        .query::<()>(op, Effect::Transaction, &pipe)
        .await
}

/// The producer's per-request writes, added to `pipe`: DEL
/// `request-cancel:<id>`, SET `request-active:<id>` to the token until the
/// deadline (at least 1 s), SET the payload stored apart when there is
/// one; in explicit-time mode their logical expiries in the side hash of
/// each key's slot. Each command names one key, so the pipeline may be
/// split by slot (hash-tagged layout) or sent as one MULTI (plain).
fn producer_writes(store: &RedisStore, s: &Submission, pipe: &mut redis::Pipeline) {
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
