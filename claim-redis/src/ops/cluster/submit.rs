//! `submit` in the hash-tagged layout, in Go's cluster order: the per-request keys first, each in its own slot, then the member added on the queue's slot.

use crate::conn::Effect;
use crate::ops::producer_writes::producer_writes;
use crate::state::RedisStore;
use claim_core::store::Submission;
use claim_core::{Op, StoreError};

/// The per-request keys ([`producer_keys`]), then ZADD of the member.
pub(crate) async fn submit(
    store: &RedisStore,
    queue: &str,
    s: &Submission,
) -> Result<(), StoreError> {
    producer_keys(store, Op::Submit, s).await?;
    let keys = store.keys();
    let zadd = redis::Cmd::zadd(keys.queue(queue).pending, s.member.as_bytes(), s.score().0);
    store.conn().query(Op::Submit, Effect::Write, &zadd).await
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
    store
        .conn()
        .query::<()>(op, Effect::Transaction, &pipe)
        .await
}
