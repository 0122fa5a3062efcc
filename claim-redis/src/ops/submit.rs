//! `submit`: enqueues exactly as the Go producer does, in one MULTI.

use crate::conn::Effect;
use crate::store::RedisStore;
use claim_core::store::Submission;
use claim_core::{Op, Score, StoreError};

/// A producer key never lives less than this (the model's floor).
const MIN_ACTIVE_MS: u64 = 1000;

/// One MULTI, as Go: DEL `request-cancel:<id>`, SET `request-active:<id>`
/// to the token until the deadline (at least 1 s), ZADD the member at
/// its deadline.
pub(crate) async fn submit(
    store: &RedisStore,
    queue: &str,
    s: &Submission,
) -> Result<(), StoreError> {
    let keys = store.keys();
    let id = &s.generation.id;
    let (active, cancel) = (keys.active(id), keys.cancel(id));
    let now = store.producer_now();
    let expiry = Score(s.deadline as f64)
        .as_millis()
        .max(now.plus(MIN_ACTIVE_MS));
    let ttl = store.real_ttl(now.until(expiry));
    let mut pipe = redis::pipe();
    pipe.atomic()
        .del(&cancel)
        .ignore()
        .cmd("SET")
        .arg(&active)
        .arg(&s.generation.token)
        .arg("PX")
        .arg(ttl)
        .ignore()
        .zadd(keys.queue(queue).pending, s.member.as_bytes(), s.deadline)
        .ignore();
    if store.explicit_now().is_some() {
        let side = keys.clock_side();
        pipe.hdel(&side, &cancel)
            .ignore()
            .hset(&side, &active, expiry.0)
            .ignore();
    }
    store
        .conn()
        .query::<()>(Op::Submit, Effect::Transaction, &pipe)
        .await
}
