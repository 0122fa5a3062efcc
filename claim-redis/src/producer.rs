//! The producer's side, exactly as the Go producer writes it: submit (one MULTI) and cancel.

use crate::conn::Effect;
use crate::store::RedisStore;
use claim_core::Op;
use claim_core::store::Submission;
use claim_core::{Generation, Score, StoreError, wire};

/// A producer key never lives less than this (the model's floor).
const MIN_ACTIVE_MS: u64 = 1000;

impl RedisStore {
    /// One MULTI, as Go: DEL `request-cancel:<id>`, SET `request-active:<id>`
    /// to the token until the deadline (at least 1 s), ZADD the member at
    /// its deadline.
    pub(crate) async fn submit_go_style(
        &self,
        queue: &str,
        s: &Submission,
    ) -> Result<(), StoreError> {
        let keys = self.keys();
        let id = &s.generation.id;
        let (active, cancel) = (keys.active(id), keys.cancel(id));
        let now = self.producer_now();
        let expiry = Score(s.deadline as f64)
            .as_millis()
            .max(now.plus(MIN_ACTIVE_MS));
        let ttl = self.real_ttl(now.until(expiry));
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
        if self.explicit_now().is_some() {
            let side = keys.clock_side();
            pipe.hdel(&side, &cancel)
                .ignore()
                .hset(&side, &active, expiry.0)
                .ignore();
        }
        self.conn()
            .pipe::<()>(Op::Submit, Effect::Transaction, &pipe)
            .await
    }

    /// As Go: the active token, if any, becomes the cancel marker for 7 days.
    pub(crate) async fn cancel_go_style(&self, id: &str) -> Result<bool, StoreError> {
        let keys = self.keys();
        let ttl = wire::CANCEL_MARKER_TTL_SECS * 1000;
        let mut call = self.scripts().cancel.prepare_invoke();
        call.key(keys.active(id))
            .key(keys.cancel(id))
            .key(keys.clock_side());
        call.arg(self.time_arg())
            .arg(self.real_ttl(ttl))
            .arg(self.producer_now().plus(ttl).0);
        let cancelled: i64 = self.conn().script(Op::Cancel, &call).await?;
        Ok(cancelled == 1)
    }

    /// Whether each generation's cancel marker holds its token (as the claim
    /// script decides `cancelled`), read in one round trip.
    pub(crate) async fn cancelled_generations(
        &self,
        generations: &[Generation],
    ) -> Result<Vec<bool>, StoreError> {
        if generations.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = generations
            .iter()
            .map(|g| self.keys().cancel(&g.id))
            .collect();
        let mut pipe = redis::pipe();
        pipe.atomic().cmd("MGET").arg(&keys);
        let now = self.explicit_now();
        if now.is_some() {
            pipe.cmd("HMGET").arg(self.keys().clock_side()).arg(&keys);
        } else {
            pipe.cmd("PING");
        }
        let (tokens, expiries): (Vec<Option<Vec<u8>>>, redis::Value) =
            self.conn().pipe(Op::Cancelled, Effect::Read, &pipe).await?;
        let expiries: Vec<Option<u64>> = match now {
            Some(_) => redis::from_redis_value(expiries)
                .map_err(|e| crate::conn::bad_reply(Op::Cancelled, Effect::Read, e))?,
            None => Vec::new(),
        };
        Ok(generations
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
            .collect())
    }
}
