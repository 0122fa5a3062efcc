//! `enqueue`: runs `lua/enqueue.lua`, the Go producer's enqueue with its sequence stamped into the member.

use super::submit::{active_expiry, payload_expiry};
use crate::store::RedisStore;
use claim_core::store::Submission;
use claim_core::{Member, Millis, Op, StoreError, wire};

/// Stamps the next sequence of the queue and deadline and enqueues; the
/// layout is `lua/enqueue.lua`'s header. Returns the member as enqueued.
pub(crate) async fn enqueue(
    store: &RedisStore,
    queue: &str,
    s: &Submission,
) -> Result<Member, StoreError> {
    let template = wire::seq_template(s.member.as_bytes())
        .map_err(|e| StoreError::invalid(Op::Enqueue, e.to_string()))?;
    let keys = store.keys();
    let id = &s.generation.id;
    let now = store.producer_now();
    let (expiry, ttl) = active_expiry(store, now, s.deadline);
    let explicit = store.explicit_now().is_some();
    let mut call = super::call::Call::new(store, &store.scripts().enqueue);
    let seq_key = keys.seq(queue, s.deadline);
    if keys.tagged() {
        // Go's cluster order: the per-request keys first (see
        // submit::producer_keys), then the script on the sequence key and
        // the pending key, in the queue's slot.
        super::submit::producer_keys(store, Op::Enqueue, s).await?;
        call.key(&seq_key)
            .key(keys.queue(queue).pending)
            .key(keys.clock_side_for(&seq_key));
    } else {
        call.key(&seq_key)
            .key(keys.cancel(id))
            .key(keys.active(id))
            .key(keys.queue(queue).pending)
            .key(keys.clock_side());
        if s.payload.is_some() {
            call.key(keys.payload(&s.payload_key()));
        }
    }
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
    let explicit_arg = |ms: Millis| {
        if explicit {
            ms.0.to_string()
        } else {
            String::new()
        }
    };
    call.arg(&s.generation.token)
        .arg(ttl)
        .arg(explicit_arg(expiry))
        .arg(explicit_arg(now))
        .arg(explicit_arg(seq_logical));
    if let Some(payload) = s.payload.as_ref().filter(|_| !keys.tagged()) {
        let (expiry, ttl) = payload_expiry(store, now, s.deadline);
        call.arg(payload.as_bytes())
            .arg(ttl)
            .arg(explicit_arg(expiry));
    }
    let seq: i64 = call.run(store, Op::Enqueue).await?;
    Ok(Member::from(template.stamp(seq)))
}
