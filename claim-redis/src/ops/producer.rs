//! The producer, as Go's producer writes: `submit` enqueues the member bytes as given (one MULTI; hash-tagged, the per-request keys first), `enqueue` runs `lua/enqueue.lua`, stamping the sequence into the member; both write the per-request keys (`request-cancel:`, `request-active:`, the payload stored apart) with their expiries.

use super::call::Call;
use crate::conn::Effect;
use crate::keys::KeyLayout;
use crate::state::RedisStore;
use claim_core::store::Submission;
use claim_core::{Member, Millis, Op, Score, StoreError, wire};

/// One MULTI, as Go: DEL `request-cancel:<id>`, SET `request-active:<id>`
/// to the token until the deadline (at least 1 s), SET the payload stored
/// apart when there is one, ZADD the member at its score. Hash-tagged:
/// in Go's cluster order, the per-request keys first, each in its own
/// slot ([`producer_keys`]), then ZADD of the member on the queue's slot.
pub(crate) async fn submit(
    store: &RedisStore,
    queue: &str,
    s: &Submission,
) -> Result<(), StoreError> {
    let pending = store.keys().queue(queue).pending;
    let zadd = redis::Cmd::zadd(pending, s.member.as_bytes(), s.score().0);
    if store.layout() == KeyLayout::HashTagged {
        producer_keys(store, Op::Submit, s).await?;
        return store.conn().query(Op::Submit, Effect::Write, &zadd).await;
    }
    let mut pipe = redis::pipe();
    pipe.atomic();
    producer_writes(store, s, &mut pipe);
    pipe.add_command(zadd).ignore();
    store
        .conn()
        .query(Op::Submit, Effect::Transaction, &pipe)
        .await
}

/// Go's cluster order: the per-request keys first,
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
    store.conn().query(op, Effect::Transaction, &pipe).await
}

/// Stamps the next sequence of the queue and deadline and enqueues; the
/// layout is `lua/enqueue.lua`'s header. Returns the member as enqueued.
/// Hash-tagged, in Go's cluster order: the per-request keys first
/// ([`producer_keys`]), then the script on the sequence key and the pending
/// key, in the queue's slot.
pub(crate) async fn enqueue(
    store: &RedisStore,
    queue: &str,
    s: &Submission,
) -> Result<Member, StoreError> {
    let template = wire::seq_template(s.member.as_bytes())
        .map_err(|e| StoreError::invalid(Op::Enqueue, e.to_string()))?;
    let now = store.producer_now();
    let mut call = Call::new(store, &store.scripts().enqueue);
    let payload_in_script = match store.layout() {
        KeyLayout::Plain => {
            plain_keys(&mut call, store, queue, s);
            true
        }
        KeyLayout::HashTagged => {
            tagged_keys(store, &mut call, queue, s).await?;
            false
        }
    };
    enqueue_args(&mut call, store, s, &template, now);
    if payload_in_script {
        enqueue_payload_args(&mut call, store, s, now);
    }
    let seq: i64 = call.run(store, Op::Enqueue).await?;
    Ok(Member::from(template.stamp(seq)))
}

/// The plain layout's keys, every one in the script call: the sequence,
/// the producer keys, the pending set, the side hash and the payload key
/// (its arguments follow the member's).
fn plain_keys(call: &mut Call<'_>, store: &RedisStore, queue: &str, s: &Submission) {
    let keys = store.keys();
    let id = &s.generation.id;
    call.key(keys.seq(queue, s.deadline))
        .key(keys.cancel(id))
        .key(keys.active(id))
        .key(keys.queue(queue).pending)
        .key(keys.clock_side());
    if s.payload.is_some() {
        call.key(keys.payload(&s.payload_key()));
    }
}

/// Writes the producer keys, then names the script's keys (the sequence
/// key, the pending key, the side hash) in `call`. The split is safe as
/// `producer_keys` argues: the member is added only after its keys landed.
async fn tagged_keys(
    store: &RedisStore,
    call: &mut Call<'_>,
    queue: &str,
    s: &Submission,
) -> Result<(), StoreError> {
    let keys = store.keys();
    let seq_key = keys.seq(queue, s.deadline);
    producer_keys(store, Op::Enqueue, s).await?;
    call.key(&seq_key)
        .key(keys.queue(queue).pending)
        .key(keys.clock_side_for(&seq_key));
    Ok(())
}

/// enqueue.lua's ARGV up to the payload: the member template around the
/// sequence, the deadline, the sequence key's expiry, the token and the
/// active key's expiry (explicit time: the logical times too).
pub(crate) fn enqueue_args(
    call: &mut Call<'_>,
    store: &RedisStore,
    s: &Submission,
    template: &wire::SeqTemplate,
    now: Millis,
) {
    let explicit = store.explicit_now().is_some();
    let (expiry, ttl) = active_expiry(store, now, s.deadline);
    call.arg(&template.prefix[..])
        .arg(&template.suffix[..])
        .arg(s.deadline);
    let seq_expiry = s.deadline.saturating_add(wire::SEQ_GRACE_SECS);
    let seq_logical = Millis((seq_expiry.max(0) as u64).saturating_mul(1000));
    if explicit {
        // Redis expires on its own clock: keep the counter for its logical
        // lifetime, measured on the explicit clock, plus the usual slack
        // (the script restarts it once the logical expiry has passed).
        call.arg("PEXPIRE")
            .arg(store.real_ttl(now.until(seq_logical)));
    } else {
        call.arg("EXPIREAT").arg(seq_expiry);
    }
    call.arg(&s.generation.token)
        .arg(ttl)
        .arg(explicit_ms(store, expiry))
        .arg(explicit_ms(store, now))
        .arg(explicit_ms(store, seq_logical));
}

/// enqueue.lua's payload ARGV (plain layout, when the submission stores
/// one apart): the payload, its PX and its logical expiry.
pub(crate) fn enqueue_payload_args(
    call: &mut Call<'_>,
    store: &RedisStore,
    s: &Submission,
    now: Millis,
) {
    if let Some(payload) = s.payload.as_ref() {
        let (expiry, ttl) = payload_expiry(store, now, s.deadline);
        call.arg(payload.as_bytes())
            .arg(ttl)
            .arg(explicit_ms(store, expiry));
    }
}

/// A time in ms as an argument in explicit-time mode, else "".
fn explicit_ms(store: &RedisStore, ms: Millis) -> String {
    match store.explicit_now() {
        Some(_) => ms.0.to_string(),
        None => String::new(),
    }
}

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
